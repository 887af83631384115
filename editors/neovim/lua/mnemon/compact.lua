-- mnemon.nvim: :MnemonCompact, make room in a full USER.md (or MEMORY.md) by merging or dropping numbered
-- entries (mnemon-ls issue 23 item 9), with vim.ui.select (which Telescope, fzf-lua and dressing.nvim
-- replace) and vim.ui.input.
--
-- The entries are numbered as `mnemon-ls runtime list --target user` numbers them. When the server reported
-- USER.md full (mnemon/maintenanceRequired) the numbers, the revision and the pending change come from that
-- plan, so the change that did not fit lands with the compaction; otherwise from mnemon/runtime/snapshot.
-- Pick entries one at a time (a pick toggles it; "Done" ends), then "Merge into one entry" (asks the merged
-- text) or "Drop" (what leaves is kept word for word in runtime/archived/). The request is
-- mnemon/runtime/compact {merge | drop}; the server checks every rule (importance never lowered, the byte
-- budget, ...) and changes nothing when one is broken. Its mnemon/maintenanceCompleted says what changed
-- (one message); a refusal is one error message.

local client = require("mnemon.client")
local util = require("mnemon.util")

local M = {}

local levels = vim.log.levels
local present = client.present
local one_line = util.one_line
local done = util.done

local FILES = { user = "USER.md", memory = "MEMORY.md" }
M.MERGE = "Merge into one entry"
M.DROP = "Drop"
local DONE = { done = true }

--- The numbered entries of `target` to offer: `callback(err, {entries = {{index, content, importance, bytes}},
--- revision, pending, file})`, from the last full-USER.md plan of this workspace or from the snapshot.
function M.numbered(c, root, bufnr, target, callback)
  local required = require("mnemon.maintenance").last_required
  local plan = type(required) == "table" and required.plan or nil
  if type(plan) == "table" and plan.target == target and required.workspace == client.root_uri(root) then
    return callback(nil, { entries = plan.entries or {}, revision = plan.revision,
      pending = present(plan.pending) and plan.pending or nil, file = FILES[target], plan = true })
  end
  client.request(c, "mnemon/runtime/snapshot", { workspace = client.root_uri(root) }, function(err, result)
    if err then
      return callback(err)
    end
    local entries = {}
    for _, entry in ipairs(type(result) == "table" and type(result.entries) == "table" and result.entries or {}) do
      if entry.target == target then
        table.insert(entries, { index = #entries + 1, content = entry.content, importance = entry.importance,
          bytes = #tostring(entry.content) })
      end
    end
    callback(nil, { entries = entries, revision = result.revision, file = FILES[target] })
  end, { bufnr = bufnr })
end

--- One picker line: "[x] 2. content (critical; 31 bytes)".
function M.format_item(item, picked)
  if item.done then
    local n = vim.tbl_count(picked)
    return string.format("Done: merge or drop the %d picked %s", n, n == 1 and "entry" or "entries")
  end
  local meta = { string.format("%d bytes", tonumber(item.bytes) or #tostring(item.content)) }
  if present(item.importance) and item.importance ~= "normal" then
    table.insert(meta, 1, tostring(item.importance))
  end
  return string.format("[%s] %d. %s (%s)", picked[item.index] and "x" or " ", item.index,
    one_line(item.content, 80), table.concat(meta, "; "))
end

--- Pick entries one at a time (each pick toggles it) until "Done"; `on_done(indexes)` (sorted), or nil when
--- cancelled.
local function pick(found, picked, on_done)
  local items = vim.list_extend({}, found.entries)
  table.insert(items, DONE)
  vim.ui.select(items, {
    prompt = string.format("mnemon: pick %s entries to merge or drop (%d picked)", found.file, vim.tbl_count(picked)),
    format_item = function(item) return M.format_item(item, picked) end,
    kind = "mnemon.compact",
  }, function(item)
    if not item then
      return on_done(nil)
    end
    if item.done then
      local indexes = vim.tbl_keys(picked)
      table.sort(indexes)
      return on_done(indexes)
    end
    picked[item.index] = (not picked[item.index]) or nil
    pick(found, picked, on_done)
  end)
end

--- Send mnemon/runtime/compact with `change` ({merge = ...} or {drop = ...}); `callback(err, receipt)`.
local function send(c, root, bufnr, target, found, change, callback)
  local params = vim.tbl_extend("force", change, { workspace = client.root_uri(root), target = target,
    revision = found.revision, pending = found.pending })
  client.request(c, "mnemon/runtime/compact", params, function(err, receipt)
    if err then
      if found.plan then -- a plan that no longer holds (or was used up) is not offered again
        require("mnemon.maintenance").last_required = nil
      end
      local msg = util.fail("not compacted: ", err)
      if util.error_code(err) == "revision-conflict" then
        client.notify("mnemon: " .. found.file .. " changed since its entries were numbered; run :MnemonCompact "
          .. "again", levels.INFO)
      end
      return done(callback, { code = util.error_code(err), message = msg, data = err.data })
    end
    if found.plan then
      require("mnemon.maintenance").last_required = nil -- the pending change landed with the compaction
    end
    pcall(function() require("mnemon.statusline").invalidate(root) end)
    done(callback, nil, receipt) -- mnemon/maintenanceCompleted says what changed
  end, { bufnr = bufnr })
end

--- :MnemonCompact [user|memory]: pick entries, then merge them into one text or drop them.
--- opts: bufnr, target (default "user"). callback(err, receipt) once (nil, nil when cancelled).
function M.compact(opts, callback)
  opts = opts or {}
  local target = opts.target or "user"
  local bufnr = util.buf(opts.bufnr)
  local c, root = util.client_or_fail(bufnr, callback)
  if not c then
    return
  end
  M.numbered(c, root, bufnr, target, function(err, found)
    if err then
      util.fail("entries not listed: ", err)
      return done(callback, err)
    end
    if #found.entries == 0 then
      client.notify("mnemon: " .. found.file .. " has no entries to compact", levels.INFO)
      return done(callback, nil, nil)
    end
    pick(found, {}, function(indexes)
      if not indexes or #indexes == 0 then
        return done(callback, nil, nil)
      end
      local numbers = table.concat(vim.tbl_map(tostring, indexes), ", ")
      util.menu(string.format("mnemon: entries %s of %s", numbers, found.file), { M.MERGE, M.DROP }, {
        [M.MERGE] = function()
          local texts = {}
          for _, index in ipairs(indexes) do
            table.insert(texts, one_line(found.entries[index].content))
          end
          util.ask("mnemon: entries " .. numbers .. " become: ", table.concat(texts, "; "), function(text)
            send(c, root, bufnr, target, found, { merge = { { sourceIndexes = indexes, content = text } } }, callback)
          end, callback, { nonblank = true })
        end,
        [M.DROP] = function()
          send(c, root, bufnr, target, found, { drop = indexes }, callback)
        end,
      }, callback)
    end)
  end)
end

return M
