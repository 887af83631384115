-- Capacity maintenance notices (mnemon-ls issue 9).
--
-- mnemon/maintenanceCompleted {workspace, kind, summary, receipt}: one message ("mnemon: <summary>"; after a
-- compaction also what changed: "merged 1, 2 into: ...", "dropped 3", the bytes before and after).
-- mnemon/maintenanceRequired {workspace, target, file, message, plan}: a full USER.md, shown as the
-- actionable message "USER.md is full: compact it with your assistant, or open it" with the commands
-- that do it (no prompt: a prompt would block Neovim):
--   :MnemonCompact         merge or drop numbered entries yourself (mnemon.compact; the pending change
--                          lands with it);
--   :MnemonCompactRequest  puts the compaction request for your assistant (the numbered entries, the
--                          budget, the revision and the rules of mnemon/runtime/compact) into the
--                          unnamed and + registers and a scratch buffer;
--   :MnemonOpenUserFile    opens the full USER.md.
-- The request that failed is not reported a second time (mnemon.util.fail leaves a full USER.md to this).
-- Both fire User autocommands (MnemonMaintenanceCompleted, MnemonMaintenanceRequired).

local compat = require("mnemon.compat")

local M = {}

M.USER_FULL_MESSAGE = "USER.md is full: compact it with your assistant, or open it"

--- The last mnemon/maintenanceRequired params (nil until one arrived).
M.last_required = nil

local levels = vim.log.levels

local function present(value)
  return value ~= nil and value ~= vim.NIL
end

local function record(method, params, ctx)
  local ok, client = pcall(require, "mnemon.client")
  if ok and client.events then
    table.insert(client.events, { method = method, params = params, client_id = ctx and ctx.client_id })
  end
end

--- One line: "mnemon: <summary>" (whitespace collapsed, at most 200 characters).
function M.completed_message(params)
  local summary = present(params.summary) and tostring(params.summary) or ""
  if summary == "" then
    summary = (present(params.kind) and tostring(params.kind) or "maintenance") .. " finished"
  end
  local text = "mnemon: " .. vim.trim(summary:gsub("%s+", " "))
  if #text > 200 then
    text = text:sub(1, 197) .. "..."
  end
  return text
end

--- The request an assistant needs to compact (same text as the VS Code extension's).
function M.compact_prompt(params)
  local plan = params.plan or {}
  local lines = {
    string.format("%s is full (%s bytes). Compact it: merge and shorten the numbered entries below into",
      tostring(plan.file), tostring(plan.limit)),
    string.format("at most %s UTF-8 bytes in total, then send %s with", tostring(plan.budgetBytes), tostring(plan.method)),
    string.format('{"revision": "%s", "target": "%s", "pending": %s,', tostring(plan.revision), tostring(plan.target),
      present(plan.pending) and vim.fn.json_encode(plan.pending) or "null"),
    ' "entries": [{"content": "...", "importance": "critical|normal|low", "sourceIndexes": [1, 2]}]}',
    "(or run: mnemon-ls runtime compact --plan FILE). Rules:",
  }
  for _, rule in ipairs(plan.rules or {}) do
    table.insert(lines, "- " .. tostring(rule))
  end
  table.insert(lines, "Entries:")
  for _, entry in ipairs(plan.entries or {}) do
    table.insert(lines, string.format("%d. [importance=%s] %s", entry.index, tostring(entry.importance),
      tostring(entry.content)))
  end
  return table.concat(lines, "\n")
end

--- What a compaction receipt (`receipt` of mnemon/maintenanceCompleted, kind local-compaction) changed, one
--- line each and numbered as the plan was: "merged 1, 2 into: <text>", "rewrote 4 as: <text>", "dropped 3",
--- "unchanged: 5", "USER.md: <before> -> <after> UTF-8 bytes". Empty for any other receipt.
function M.compaction_lines(receipt)
  if type(receipt) ~= "table" or receipt.kind ~= "local-compaction" then
    return {}
  end
  local gone, lines, unchanged = {}, {}, {}
  for _, archived in ipairs(receipt.archived or {}) do
    gone[archived.sourceIndex] = true
  end
  local function numbers(list)
    return table.concat(vim.tbl_map(tostring, list), ", ")
  end
  local function clip(text)
    text = vim.trim(tostring(text):gsub("%s+", " "))
    return #text > 160 and (text:sub(1, 157) .. "...") or text
  end
  for _, entry in ipairs(receipt.entries or {}) do
    local sources = entry.sourceIndexes or {}
    if #sources > 1 then
      table.insert(lines, "merged " .. numbers(sources) .. " into: " .. clip(entry.content))
    elseif sources[1] and gone[sources[1]] then
      table.insert(lines, "rewrote " .. tostring(sources[1]) .. " as: " .. clip(entry.content))
    else
      vim.list_extend(unchanged, sources)
    end
  end
  if type(receipt.dropped) == "table" and #receipt.dropped > 0 then
    table.insert(lines, "dropped " .. numbers(receipt.dropped))
  end
  if #unchanged > 0 then
    table.insert(lines, "unchanged: " .. numbers(unchanged))
  end
  if present(receipt.bytesBefore) and present(receipt.bytesAfter) then
    table.insert(lines, string.format("%s: %s -> %s UTF-8 bytes", receipt.target == "memory" and "MEMORY.md"
      or "USER.md", tostring(receipt.bytesBefore), tostring(receipt.bytesAfter)))
  end
  return lines
end

local function on_completed(_, params, ctx)
  params = params or {}
  record("mnemon/maintenanceCompleted", params, ctx)
  local lines = M.compaction_lines(params.receipt)
  local text = M.completed_message(params)
  if #lines > 0 then
    text = text .. "\n  " .. table.concat(lines, "\n  ")
  end
  compat.notify(text, levels.INFO)
  compat.user_event("MnemonMaintenanceCompleted", params)
end

local function on_required(_, params, ctx)
  params = params or {}
  record("mnemon/maintenanceRequired", params, ctx)
  M.last_required = params
  local message = params.target == "user" and M.USER_FULL_MESSAGE or tostring(params.message)
  compat.notify("mnemon: " .. message .. " (:MnemonCompact merges or drops entries, :MnemonCompactRequest copies "
    .. "the request for your assistant, :MnemonOpenUserFile opens it)", levels.WARN)
  compat.user_event("MnemonMaintenanceRequired", params)
end

--- :MnemonCompactRequest
function M.compact_request()
  local params = M.last_required
  if not params then
    compat.notify("mnemon: no full USER.md was reported in this session", levels.INFO)
    return nil
  end
  local prompt = M.compact_prompt(params)
  vim.fn.setreg('"', prompt)
  pcall(vim.fn.setreg, "+", prompt)
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(prompt, "\n", { plain = true }))
  compat.set_option(buf, "buftype", "nofile")
  compat.set_option(buf, "modified", false)
  compat.notify("mnemon: the compaction request is in the unnamed register: paste it to your assistant", levels.INFO)
  return prompt
end

--- :MnemonOpenUserFile
function M.open_user_file()
  local params = M.last_required
  if not params or not present(params.file) then
    compat.notify("mnemon: no full USER.md was reported in this session", levels.INFO)
    return
  end
  vim.cmd("edit " .. vim.fn.fnameescape(tostring(params.file)))
end

local defined = false

--- Handlers to merge into a client's handlers; defines the two commands on first use.
function M.handlers()
  if not defined then
    defined = true
    vim.api.nvim_create_user_command("MnemonCompactRequest", function() M.compact_request() end,
      { desc = "mnemon: put the USER.md compaction request for your assistant into a register and a buffer" })
    vim.api.nvim_create_user_command("MnemonOpenUserFile", function() M.open_user_file() end,
      { desc = "mnemon: open the full USER.md" })
  end
  return {
    ["mnemon/maintenanceCompleted"] = on_completed,
    ["mnemon/maintenanceRequired"] = on_required,
  }
end

return M
