-- mnemon.nvim: the views of the workspace's memory (split out of init.lua; require("mnemon") re-exports
-- them): the wake snapshot and recall results in read-only markdown scratch buffers (mnemon://wake<root>,
-- mnemon://recall<root>), and mnemon/status as a notification.

local compat = require("mnemon.compat")
local client = require("mnemon.client")
local util = require("mnemon.util")

local M = {}

local levels = vim.log.levels
local notify = client.notify
local present = client.present
local done = util.done
local client_or_fail = util.client_or_fail
local query_prelude = util.query_prelude
local workspace_label = util.workspace_label
local usage_text = util.usage_text
-- ------------------------------------------------------------------ wake

local scratch_buffers = {}

--- Show `text` in the read-only markdown scratch buffer `mnemon://<kind><root>` (one per kind and root).
local function show_scratch(root, text, kind)
  kind = kind or "wake"
  local key = kind .. "\0" .. root
  local bufnr = scratch_buffers[key]
  if not bufnr or not vim.api.nvim_buf_is_valid(bufnr) then
    bufnr = vim.api.nvim_create_buf(false, true)
    scratch_buffers[key] = bufnr
    pcall(vim.api.nvim_buf_set_name, bufnr, "mnemon://" .. kind .. root)
    compat.set_option(bufnr, "buftype", "nofile")
    compat.set_option(bufnr, "bufhidden", "wipe")
    compat.set_option(bufnr, "swapfile", false)
    vim.b[bufnr].mnemon_root = root
  end
  if vim.bo[bufnr].filetype ~= "markdown" then
    compat.set_option(bufnr, "filetype", "markdown")
  end
  return util.show_lines(bufnr, vim.split(text, "\n", { plain = true }))
end

--- Show the wake snapshot of the buffer's workspace (mnemon/wake) in a scratch buffer.
--- opts: bufnr, branch (render for another branch). callback(err, result, wake_bufnr).
function M.wake(opts, callback)
  opts = opts or {}
  local bufnr = (opts.bufnr == nil or opts.bufnr == 0) and vim.api.nvim_get_current_buf() or opts.bufnr
  local c, root = client_or_fail(bufnr, callback)
  if not c then
    return
  end
  local params = { workspace = client.root_uri(root) }
  if opts.branch then
    params.branch = opts.branch
  end
  client.request(c, "mnemon/wake", params, function(err, result)
    if not util.reply_ok("wake", err, result, callback, { field = "text" }) then
      return
    end
    local ok, shown = pcall(show_scratch, root, result.text)
    if not ok then
      notify("mnemon: cannot show the wake snapshot: " .. tostring(shown), levels.ERROR)
      return done(callback, { message = tostring(shown) })
    end
    done(callback, nil, result, shown)
  end, { bufnr = bufnr })
end

-- ------------------------------------------------------------------ recall

local function num(value)
  return type(value) == "number" and value or 0
end

--- Lines of the recall buffer for a mnemon/recall result (see :help :MnemonRecall).
function M.format_recall(result)
  local results = type(result.results) == "table" and result.results or {}
  local hidden = type(result.hidden) == "table" and result.hidden or {}
  local other, detached = num(hidden.otherBranch), num(hidden.detachedHead)
  local header = string.format('# mnemon recall: "%s" — %d result%s', tostring(result.query), #results,
    #results == 1 and "" or "s")
  if other + detached > 0 then
    header = header .. string.format(", %d hidden", other + detached)
  end
  local lines = { header }
  for i, item in ipairs(results) do
    local score = type(item.score) == "number" and string.format("%.2f", item.score) or "n/a"
    local meta = {
      "score " .. score,
      "tier " .. (present(item.tier) and tostring(item.tier) or "unknown"),
      "category " .. (present(item.category) and tostring(item.category) or "-"),
      "created " .. (present(item.createdAt) and tostring(item.createdAt) or "-"),
    }
    if present(item.branchLabel) then
      table.insert(meta, "branch " .. tostring(item.branchLabel))
    end
    table.insert(lines, "")
    table.insert(lines, string.format("## %d. %s", i, present(item.spaceName) and tostring(item.spaceName)
      or tostring(item.spaceId)))
    table.insert(lines, string.format("_%s · id %s · %s_", tostring(item.spaceId), tostring(item.id),
      table.concat(meta, " · ")))
    table.insert(lines, "")
    for _, line in ipairs(vim.split(tostring(present(item.content) and item.content or ""), "\n", { plain = true })) do
      table.insert(lines, line)
    end
  end
  local tail = {}
  if other > 0 then
    table.insert(tail, string.format("Hidden: %d item%s scoped to another git branch.", other, other == 1 and "" or "s"))
  end
  if detached > 0 then
    table.insert(tail, string.format("Hidden: %d branch-scoped item%s (no current git branch).", detached,
      detached == 1 and "" or "s"))
  end
  if type(result.truncated) == "number" and result.truncated > 0 then
    table.insert(tail, string.format("Truncated: %d more result(s) not shown.", result.truncated))
  end
  for _, notice in ipairs(type(result.notices) == "table" and result.notices or {}) do
    table.insert(tail, "Notice: " .. tostring(notice))
  end
  if #tail > 0 then
    table.insert(lines, "")
    table.insert(lines, "---")
    for _, line in ipairs(tail) do
      table.insert(lines, line)
    end
  end
  return lines
end

--- Recall `query` from the workspace's active Memory Spaces (mnemon/recall, with the server's branch
--- scope) into the read-only markdown scratch buffer `mnemon://recall<root>`. No result: one INFO
--- notification with the server's hint (and hidden counts), no buffer. opts: bufnr, limit, mode,
--- spaces (list of ids). callback(err, result, recall_bufnr) (recall_bufnr nil when nothing matched).
function M.recall(query, opts, callback)
  opts = opts or {}
  local c, root, bufnr
  c, root, query, bufnr = query_prelude("MnemonRecall", query, opts, callback)
  if not c then
    return
  end
  local params = { workspace = client.root_uri(root), query = query }
  if opts.limit then
    params.limit = opts.limit
  end
  if opts.mode then
    params.mode = opts.mode
  end
  if opts.spaces then
    params.spaces = opts.spaces
  end
  client.request(c, "mnemon/recall", params, function(err, result)
    if not util.reply_ok("recall", err, result, callback) then
      return
    end
    local results = type(result.results) == "table" and result.results or {}
    if #results == 0 then
      local hidden = type(result.hidden) == "table" and result.hidden or {}
      local n = num(hidden.otherBranch) + num(hidden.detachedHead)
      local msg = string.format('mnemon: nothing recalled for "%s": %s', query,
        present(result.hint) and tostring(result.hint) or "nothing matched")
      if n > 0 then
        msg = msg .. string.format(" (%d branch-scoped item%s hidden)", n, n == 1 and "" or "s")
      end
      notify(msg, levels.INFO)
      for _, notice in ipairs(type(result.notices) == "table" and result.notices or {}) do
        notify("mnemon: " .. tostring(notice), levels.WARN)
      end
      return done(callback, nil, result, nil)
    end
    local ok, shown = pcall(show_scratch, root, table.concat(M.format_recall(result), "\n"), "recall")
    if not ok then
      notify("mnemon: cannot show the recall results: " .. tostring(shown), levels.ERROR)
      return done(callback, { message = tostring(shown) })
    end
    done(callback, nil, result, shown)
  end, { bufnr = bufnr })
end

-- ------------------------------------------------------------------ status

--- Lines describing a mnemon/status result; second value: protocol warning or nil.
function M.format_status(result)
  local lines = {}
  table.insert(lines, string.format("mnemon-ls %s, protocol %s", tostring(result.version), tostring(result.protocolVersion)))
  local warning
  if result.protocolVersion ~= client.PROTOCOL_VERSION then
    warning = string.format("mnemon: mnemon-ls speaks protocol %s but this plugin expects %d; update the one that is older",
      tostring(result.protocolVersion), client.PROTOCOL_VERSION)
  end
  local rows = type(result.workspaces) == "table" and result.workspaces or {}
  if #rows == 0 then
    table.insert(lines, "  no workspace folder")
  end
  for _, row in ipairs(rows) do
    local branch = present(row.branch) and tostring(row.branch)
      or ("none (" .. (present(row.branchReason) and tostring(row.branchReason) or (row.detached and "detached HEAD" or "no branch")) .. ")")
    local entries = type(row.entries) == "table" and row.entries or {}
    local usage = type(row.usage) == "table" and row.usage or {}
    local name = present(row.name) and row.name ~= "" and row.name or workspace_label(row.uri)
    table.insert(lines, string.format("  %s: branch %s; entries user %s, memory %s; usage user %s, memory %s; storage %s (%s)",
      tostring(name), branch, tostring(entries.user), tostring(entries.memory), usage_text(usage.user),
      usage_text(usage.memory), tostring(row.scope), tostring(row.root)))
    for _, problem in ipairs(type(row.problems) == "table" and row.problems or {}) do
      table.insert(lines, "    problem: " .. tostring(problem))
    end
  end
  return lines, warning
end

--- Show mnemon/status of the buffer's client (or of every running client when the buffer has none).
function M.status(opts, callback)
  opts = opts or {}
  local bufnr = (opts.bufnr == nil or opts.bufnr == 0) and vim.api.nvim_get_current_buf() or opts.bufnr
  local clients = {}
  local c = client.for_buf(bufnr)
  if c then
    clients = { c }
  else
    clients = client.all()
  end
  if #clients == 0 then
    local msg = "mnemon: no mnemon-ls client is running (open a file inside a git repository or a .mnemon root)"
    notify(msg, levels.WARN)
    return done(callback, { message = msg })
  end
  for _, each in ipairs(clients) do
    client.request(each, "mnemon/status", vim.empty_dict(), function(err, result)
      if not util.reply_ok("status", err, result, callback) then
        return
      end
      local lines, warning = M.format_status(result)
      notify(table.concat(lines, "\n"), levels.INFO)
      if warning then
        notify(warning, levels.WARN)
      end
      done(callback, nil, result)
    end, { bufnr = bufnr })
  end
end
return M
