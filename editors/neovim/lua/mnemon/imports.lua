-- mnemon.nvim: import the memory other assistants keep (mnemon-ls issue 28 item 2) with vim.ui.select.
--
--   :MnemonImport   scan the workspace and the home directory (mnemon/import/scan: CLAUDE.md and Claude Code's
--                   auto memory, AGENTS.md, Cursor rules, Copilot instructions, a Cline/Roo memory bank, Hermes
--                   memories), then pick what to import: the first list offers "Import the N picked items" and
--                   one line per source ("Claude Code: 3 of 3 picked"); a source opens its items, each
--                   "[x] text -> MEMORY.md: why" (every item picked but duplicates, earlier imports and
--                   proposals rejected in review), and choosing an item ticks or unticks it. "Done" (or
--                   cancelling) goes back to the first list; cancelling that imports nothing. The import
--                   (mnemon/import/apply with the scan's fingerprint) is refused with nothing written when a file
--                   changed since the scan; the receipt says how many went where and how many were skipped.
--
-- Works with any vim.ui.select (the built-in inputlist, Telescope, fzf-lua, dressing.nvim): one choice per list.

local client = require("mnemon.client")
local util = require("mnemon.util")

local M = {}

local levels = vim.log.levels
local notify = client.notify
local done = util.done
local one_line = util.one_line

--- Where an item goes, in words.
M.destinations = { user = "USER.md", memory = "MEMORY.md", document = "Document", space = "Memory Space" }

local SKIP_WORDS = { ["already-imported"] = "already imported", ["rejected-in-review"] = "rejected in review",
  ["exact-duplicate"] = "duplicate", ["near-duplicate"] = "near duplicate",
  ["temporary-progress"] = "temporary progress" }

--- Why an item would be skipped, in words ("duplicate of CLAUDE.md: Notes", "already imported").
function M.skip_text(skip)
  local words = SKIP_WORDS[skip.why] or tostring(skip.why)
  if skip.why == "exact-duplicate" or skip.why == "near-duplicate" then
    return words .. " of " .. tostring(skip.of)
  end
  return words
end

local function skipped(item)
  return type(item.skip) == "table"
end

--- The picks of a scan: item id -> true for every item the scan would not skip.
function M.initial_picks(scan)
  local picks = {}
  for _, source in ipairs(scan.sources or {}) do
    for _, item in ipairs(source.items or {}) do
      if not skipped(item) then
        picks[item.id] = true
      end
    end
  end
  return picks
end

local function counted(source, picks)
  local n = 0
  for _, item in ipairs(source.items or {}) do
    if picks[item.id] then
      n = n + 1
    end
  end
  return n, #(source.items or {})
end

local function plural(n, one, many)
  return string.format("%d %s", n, n == 1 and one or (many or one .. "s"))
end

--- The ids picked, in scan order.
function M.picked_ids(scan, picks)
  local ids = {}
  for _, source in ipairs(scan.sources or {}) do
    for _, item in ipairs(source.items or {}) do
      if picks[item.id] then
        table.insert(ids, item.id)
      end
    end
  end
  return ids
end

--- The first list: "Import the N picked items" (when any is picked), then one line per source with items.
function M.top_entries(scan, picks)
  local entries = {}
  local total = #M.picked_ids(scan, picks)
  if total > 0 then
    table.insert(entries, { kind = "import", label = "Import the " .. plural(total, "picked item") })
  end
  for _, source in ipairs(scan.sources or {}) do
    if #(source.items or {}) > 0 then
      local n, all = counted(source, picks)
      local refused = #(source.refused or {}) > 0 and (", " .. plural(#source.refused, "file") .. " refused") or ""
      table.insert(entries, { kind = "source", source = source,
        label = string.format("%s: %d of %d picked%s", tostring(source.title), n, all, refused) })
    end
  end
  return entries
end

--- One line per item: "[x] text -> MEMORY.md: why (file)"; a skipped one says why it is skipped.
function M.item_label(item, picked)
  local why = skipped(item) and ("skipped: " .. M.skip_text(item.skip)) or tostring(item.reason)
  return string.format("[%s] %s -> %s: %s (%s)", picked and "x" or " ", one_line(item.preview, 70),
    M.destinations[item.destination] or tostring(item.destination), why,
    vim.fn.fnamemodify(tostring(item.path), ":~:."))
end

--- The list of one source: "Done", "Pick all", "Pick none", then its items.
function M.source_entries(source, picks)
  local n, all = counted(source, picks)
  local entries = {
    { kind = "done", label = string.format("Done with %s (%d of %d picked)", tostring(source.title), n, all) },
    { kind = "all", label = "Pick all" },
    { kind = "none", label = "Pick none" },
  }
  for _, item in ipairs(source.items or {}) do
    table.insert(entries, { kind = "item", item = item, label = M.item_label(item, picks[item.id]) })
  end
  return entries
end

--- The receipt in one line: what went where, and what was skipped and why.
function M.receipt_text(receipt)
  local c = receipt.counts or {}
  local where = {}
  for _, t in ipairs({ "memory", "user", "document", "space" }) do
    if (c[t] or 0) > 0 then
      table.insert(where, string.format("%d to %s", c[t], M.destinations[t]))
    end
  end
  local text = "mnemon: imported " .. plural(c.written or 0, "item")
  if #where > 0 then
    text = text .. " (" .. table.concat(where, ", ") .. ")"
  end
  if (c.skipped or 0) > 0 then
    local reasons, seen = {}, {}
    for _, s in ipairs(receipt.skipped or {}) do
      local r = M.skip_text(s)
      if not seen[r] then
        seen[r] = true
        table.insert(reasons, r)
      end
    end
    text = text .. string.format("; skipped %d (%s)", c.skipped, table.concat(reasons, "; "))
  end
  local refused = receipt.refusedItems or {}
  if #refused > 0 then
    local parts = {}
    for _, r in ipairs(refused) do
      table.insert(parts, M.refusal_text(r))
    end
    text = text .. string.format("; refused %d (%s): importing again tries %s again", #refused,
      table.concat(parts, "; "), #refused == 1 and "it" or "them")
  end
  return text
end

--- One item its Source refused, in words: "Fixture policy -> Document: documents.activeLimitBytes: <rule>" (the
--- last part of its title; the field, when the refusal names one).
function M.refusal_text(refusal)
  local title = tostring(refusal.title)
  local last = title:match("([^>]*)$"):gsub("^%s+", "")
  title = last ~= "" and last or title
  local field = (type(refusal.field) == "string" and refusal.field ~= "") and (refusal.field .. ": ") or ""
  return string.format("%s -> %s: %s%s", title, M.destinations[refusal.destination] or tostring(refusal.destination),
    field, tostring(refusal.rule))
end

local function label_of(entry)
  return entry.label
end

--- The imported files a scan did not read because they are outside the repository and the Claude home
--- (needsApproval of every source), one "path (imported by ...)" line each; {} when none.
function M.approval_lines(scan)
  local lines = {}
  for _, source in ipairs(scan.sources or {}) do
    for _, f in ipairs(source.needsApproval or {}) do
      lines[#lines + 1] = string.format("%s (imported by %s)", vim.fn.fnamemodify(tostring(f.path), ":~:."),
        table.concat(f.importedBy or {}, "; "))
    end
  end
  return lines
end

--- The question asked before the picks when a scan left files outside the repository unread.
function M.approval_prompt(lines)
  return string.format("mnemon: %s outside the repository %s not read (credential locations never are): %s",
    plural(#lines, "imported file"), #lines == 1 and "was" or "were",
    table.concat(lines, ", "))
end

--- Scan, pick, import (module doc). opts: bufnr. callback(err, receipt) (nil receipt when cancelled or
--- nothing was found). Files imported from outside the repository (an @path of CLAUDE.md) are read only when the
--- person says so: "Read them" scans again with allowOutside, "Leave them out" goes on without them.
function M.import(opts, callback)
  opts = opts or {}
  local bufnr = util.buf(opts.bufnr)
  local c, root = util.client_or_fail(bufnr, callback)
  if not c then
    return
  end
  local workspace = client.root_uri(root)
  local pick_from
  local function scan_then(allow_outside)
    client.request(c, "mnemon/import/scan", { workspace = workspace, allowOutside = allow_outside },
      function(err, scan)
        if err then
          util.fail("nothing imported: ", err)
          return done(callback, err)
        end
        local waiting = M.approval_lines(scan)
        if allow_outside or #waiting == 0 then
          return pick_from(scan, allow_outside)
        end
        vim.ui.select({ "Read them", "Leave them out" }, { prompt = M.approval_prompt(waiting),
          kind = "mnemon.import" }, function(choice)
          if not choice then
            return done(callback, nil, nil)
          end
          if choice == "Read them" then
            return scan_then(true)
          end
          pick_from(scan, false)
        end)
      end, { bufnr = bufnr })
  end
  pick_from = function(scan, allow_outside)
    for _, source in ipairs(scan.sources or {}) do
      for _, refused in ipairs(source.refused or {}) do
        notify(string.format("mnemon: refused %s: %s", vim.fn.fnamemodify(tostring(refused.path), ":~:."),
          tostring(refused.reason)), levels.WARN)
      end
    end
    local picks = M.initial_picks(scan)
    if #M.top_entries(scan, picks) == 0 then
      notify("mnemon: no memory of other assistants found: looked for CLAUDE.md, AGENTS.md, Cursor rules, Copilot"
        .. " instructions, a Cline/Roo memory bank and Hermes memories", levels.INFO)
      return done(callback, nil, nil)
    end

    local top
    local function apply()
      local ids = M.picked_ids(scan, picks)
      client.request(c, "mnemon/import/apply", { workspace = workspace, fingerprint = scan.fingerprint, ids = ids,
        allowOutside = allow_outside }, function(err2, receipt)
          if err2 then
            util.fail("nothing imported: ", err2)
            return done(callback, err2)
          end
          -- items refused by their Source (the rest imported, or nothing): a warning, not news
          notify(M.receipt_text(receipt), #(receipt.refusedItems or {}) > 0 and levels.WARN or levels.INFO)
          done(callback, nil, receipt)
        end, { bufnr = bufnr })
    end
    local function items_of(source)
      vim.ui.select(M.source_entries(source, picks), { prompt = "mnemon: " .. tostring(source.title)
        .. ": pick what to import", format_item = label_of, kind = "mnemon.import" }, function(entry)
        if not entry or entry.kind == "done" then
          return top()
        end
        if entry.kind == "item" then
          picks[entry.item.id] = not picks[entry.item.id] or nil
        else
          for _, item in ipairs(source.items) do
            picks[item.id] = entry.kind == "all" or nil
          end
        end
        items_of(source)
      end)
    end
    top = function()
      local entries = M.top_entries(scan, picks)
      local total = #M.picked_ids(scan, picks)
      vim.ui.select(entries, { prompt = string.format("mnemon: import from other assistants (%d picked)", total),
        format_item = label_of, kind = "mnemon.import" }, function(entry)
        if not entry then
          return done(callback, nil, nil)
        end
        if entry.kind == "import" then
          return apply()
        end
        items_of(entry.source)
      end)
    end
    top()
  end
  scan_then(false)
end

return M
