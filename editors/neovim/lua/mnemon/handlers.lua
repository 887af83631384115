-- mnemon-ls clients: handlers of the server's notifications and requests (mnemon/branchChanged,
-- mnemon/projectionRepaired, window/showMessage(Request), workspace/configuration, window/showDocument).
-- Split out of client.lua; require("mnemon.client").handlers() returns the table, with the capacity
-- maintenance handlers (mnemon.maintenance). State they share with the client (events, pending commands
-- and repairs, last_saved_edit) lives in mnemon.client.

local compat = require("mnemon.compat")
local client = require("mnemon.client")
local workspace_label = require("mnemon.util").workspace_label

local M = {}

local levels = vim.log.levels
local present = client.present
local notify = client.notify
local pending_commands = client.pending_commands
local pending_repairs = client.pending_repairs

--- client.events keeps the newest MAX_EVENTS notifications.
local MAX_EVENTS = 50
local function record(method, params, client_id)
  table.insert(client.events, { method = method, params = params, client_id = client_id })
  if #client.events > MAX_EVENTS then
    table.remove(client.events, 1)
  end
end

local function on_branch_changed(_, params, ctx)
  params = params or {}
  record("mnemon/branchChanged", params, ctx and ctx.client_id)
  local where = workspace_label(params.workspace)
  local msg
  if present(params.branch) then
    msg = string.format("mnemon: %s is now on git branch %s", where, params.branch)
    if present(params.previous) and params.previous ~= params.branch then
      msg = msg .. string.format(" (was %s)", params.previous)
    end
  else
    local why = present(params.reason) and tostring(params.reason) or (params.detached and "detached HEAD" or "unknown")
    msg = string.format("mnemon: %s has no current git branch (%s); branch-scoped memories follow detachedHeadPolicy", where, why)
  end
  notify(msg, levels.INFO)
  pcall(function() require("mnemon.statusline").invalidate() end)
  compat.user_event("MnemonBranchChanged", params)
end

local function on_projection_repaired(_, params, ctx)
  params = params or {}
  local client_id = ctx and ctx.client_id
  record("mnemon/projectionRepaired", params, client_id)
  local file = present(params.file) and tostring(params.file) or "?"
  local base = vim.fn.fnamemodify(file, ":t")
  if client_id then
    pending_repairs[client_id] = pending_repairs[client_id] or {}
    table.insert(pending_repairs[client_id], base)
  end
  local edit = params.handEdit
  if type(edit) == "table" and present(edit.status) then
    -- The result of a hand edit (imported, not applied, crash leftover). The server follows it with a
    -- window/showMessage or window/showMessageRequest saying the same, which is swallowed.
    if present(edit.savedAs) then
      client.last_saved_edit = tostring(edit.savedAs)
    end
    if edit.status ~= "format" then
      local level = (edit.status == "rejected" or edit.status == "conflict") and levels.WARN or levels.INFO
      notify("mnemon: " .. tostring(edit.message), level)
    elseif client_id then
      table.remove(pending_repairs[client_id]) -- nothing follows a line-ending-only change
    end
  elseif present(params.preservedAs) then
    notify(string.format("mnemon: %s was edited outside mnemon; it was rebuilt from memories.json and your edit was saved at %s",
      file, params.preservedAs), levels.WARN)
  else
    notify(string.format("mnemon: %s was missing or empty; it was rebuilt from memories.json", file), levels.INFO)
  end
  pcall(function() require("mnemon.statusline").invalidate() end)
  compat.user_event("MnemonProjectionRepaired", params)
end

local message_levels = { [1] = levels.ERROR, [2] = levels.WARN, [3] = levels.INFO, [4] = levels.DEBUG }

local function swallow_show_message(client_id, message)
  if not client_id or type(message) ~= "string" then
    return false
  end
  local tokens = pending_commands[client_id]
  if tokens then
    for i, token in ipairs(tokens) do
      for _, pattern in ipairs(token.patterns) do
        if message:match(pattern) then
          table.remove(tokens, i).swallowed = true
          return true
        end
      end
    end
  end
  local repairs = pending_repairs[client_id]
  if repairs then
    for i, base in ipairs(repairs) do
      if message:find(base, 1, true) then
        table.remove(repairs, i)
        return true
      end
    end
  end
  return false
end

local function on_show_message(_, params, ctx)
  params = params or {}
  local message = present(params.message) and tostring(params.message) or ""
  if swallow_show_message(ctx and ctx.client_id, message) then
    return vim.NIL
  end
  notify(message, message_levels[params.type] or levels.INFO)
  return vim.NIL
end

--- window/showMessageRequest: mnemon-ls asks only about a hand edit it did not apply ("Open edit").
--- The plugin already showed that result from mnemon/projectionRepaired, so the request is answered
--- without a prompt (a prompt would block Neovim); `:MnemonOpenEdit` opens the saved edit instead.
local function on_show_message_request(_, params, ctx)
  params = params or {}
  record("window/showMessageRequest", params, ctx and ctx.client_id)
  local message = present(params.message) and tostring(params.message) or ""
  if not swallow_show_message(ctx and ctx.client_id, message) then
    notify(message, message_levels[params.type] or levels.INFO)
  end
  return vim.NIL
end

local function lookup(settings, section)
  local value = settings
  for key in section:gmatch("[^.]+") do
    if type(value) ~= "table" then
      return vim.NIL
    end
    value = value[key]
  end
  if value == nil then
    return vim.NIL
  end
  return value
end

--- workspace/configuration: answers section `mnemon` (and any dotted section) from the client's
--- `settings` table; Neovim 0.7 does not advertise the capability, so the same settings also travel in
--- initializationOptions.
local function on_configuration(_, params, ctx)
  local lsp_client = ctx and compat.get_client_by_id(ctx.client_id)
  local settings = (lsp_client and lsp_client.config and lsp_client.config.settings) or {}
  local response = {}
  for _, item in ipairs((params and params.items) or {}) do
    local value
    if present(item.section) and item.section ~= "" then
      value = lookup(settings, item.section)
    else
      value = settings
    end
    if type(value) == "table" and vim.tbl_isempty(value) then
      value = vim.empty_dict()
    end
    table.insert(response, value)
  end
  return response
end

--- window/showDocument (sent by mnemon-ls after "Create document from file" or "Show wake snapshot"
--- when the client announces support, i.e. on Neovim 0.8+): the file opens in a split, like the
--- commands do when they open it themselves, instead of replacing the current buffer.
local function on_show_document(_, params, ctx)
  params = params or {}
  record("window/showDocument", params, ctx and ctx.client_id)
  if params.external or not present(params.uri) then
    return { success = false }
  end
  local ok, path = pcall(vim.uri_to_fname, params.uri)
  if not ok or type(path) ~= "string" or path == "" then
    return { success = false }
  end
  local line
  local selection = params.selection
  if type(selection) == "table" and type(selection.start) == "table" and type(selection.start.line) == "number" then
    line = selection.start.line + 1
  end
  local shown, problem = pcall(client.show_file, path, { line = line, focus = params.takeFocus ~= false })
  if not shown then
    notify("mnemon: cannot open " .. path .. ": " .. tostring(problem), levels.ERROR)
    return { success = false }
  end
  return { success = true }
end


--- The handler table of a mnemon-ls client config (see client.handlers()).
function M.handlers()
  return {
    ["mnemon/branchChanged"] = on_branch_changed,
    ["mnemon/projectionRepaired"] = on_projection_repaired,
    ["window/showMessage"] = on_show_message,
    ["window/showMessageRequest"] = on_show_message_request,
    ["workspace/configuration"] = on_configuration,
    ["window/showDocument"] = on_show_document,
  }
end

return M
