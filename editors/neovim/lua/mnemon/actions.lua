-- Client-side handlers (vim.lsp.commands) of the server's code-action commands, so every code action
-- does what it says on every Neovim: on 0.7, which has no window/showDocument, "Show wake snapshot"
-- and "Create document from file" open the file the result names; on 0.8+ the server already showed
-- it (result.shown) and nothing opens twice. The result is reported once (the server's own
-- window/showMessage about it is swallowed).

local client = require("mnemon.client")
local compat = require("mnemon.compat")

local M = {}

local levels = vim.log.levels
local notify = client.notify
local present = client.present

M.CMD_SHOW_WAKE = "mnemon.server.showWakeSnapshot"
M.CMD_CREATE_DOCUMENT = "mnemon.server.createDocumentFromFile"
M.CMD_UPDATE_DOCUMENT = "mnemon.server.updateDocumentFromFile"

--- The last result of each command run through these handlers ({command = result}), for tests and scripts.
M.last = {}

local function failure(result)
  local e = type(result) == "table" and type(result.error) == "table" and result.error or {}
  local msg = tostring(present(e.message) and e.message or "unknown error")
  if present(e.code) then
    msg = msg .. " [" .. tostring(e.code) .. "]"
  end
  return msg
end

local function open(path)
  local ok, problem = pcall(client.show_file, tostring(path))
  if not ok then
    notify("mnemon: cannot open " .. tostring(path) .. ": " .. tostring(problem), levels.ERROR)
  end
end

local specs = {
  [M.CMD_SHOW_WAKE] = {
    swallow = { "^mnemon:" },
    failed = "mnemon: wake snapshot not shown: ",
    success = function(result)
      if result.shown ~= true and present(result.path) then
        open(result.path)
      end
    end,
  },
  [M.CMD_CREATE_DOCUMENT] = {
    swallow = { "^mnemon: document created", "^mnemon: no document created" },
    failed = "mnemon: no document created: ",
    success = function(result)
      local doc = type(result.document) == "table" and result.document or {}
      notify(string.format("mnemon: document created: %s (%s)", tostring(doc.title), tostring(doc.relativePath)),
        levels.INFO)
      if result.shown ~= true and present(result.path) then
        open(result.path)
      end
    end,
  },
  [M.CMD_UPDATE_DOCUMENT] = {
    swallow = { "^mnemon: document updated", "^mnemon: document unchanged", "^mnemon: document adopted",
      "^mnemon: document not updated" },
    failed = "mnemon: document not updated: ",
    success = function(result)
      local doc = type(result.document) == "table" and result.document or {}
      if result.action == "unchanged" then
        notify(string.format("mnemon: document unchanged: %s: no change; revision %s kept", tostring(doc.title),
          tostring(doc.revision)), levels.INFO)
        return
      end
      if result.action == "adopted" then -- the file's text was already the managed file's (a hand edit): taken in
        notify(string.format("mnemon: document adopted: %s (revision %s): the hand edit already was that text",
          tostring(doc.title), tostring(doc.revision)), levels.INFO)
        return
      end
      notify(string.format("mnemon: document updated: %s (revision %s)", tostring(doc.title), tostring(doc.revision)),
        levels.INFO)
    end,
  },
}

--- Run the server command `command` ({command, arguments}) for the client `ctx.client_id`, then report.
function M.run(command, ctx, callback)
  local spec = specs[command.command]
  local c = ctx and compat.get_client_by_id(ctx.client_id)
  if not spec or not c then
    notify("mnemon: cannot run " .. tostring(command.command) .. ": no mnemon-ls client", levels.ERROR)
    return
  end
  local argument = type(command.arguments) == "table" and command.arguments[1] or vim.empty_dict()
  client.execute_command(c, command.command, argument, spec.swallow, function(err, result)
    M.last[command.command] = err and { error = err } or result
    if err then
      notify(spec.failed .. client.format_error(err), levels.ERROR)
    elseif type(result) ~= "table" or result.success == false then
      notify(spec.failed .. failure(result), levels.ERROR)
    else
      spec.success(result)
    end
    if callback then
      pcall(callback, err, result)
    end
  end, { bufnr = ctx.bufnr })
end

--- Register the handlers in vim.lsp.commands (idempotent; called with the client handlers).
function M.register()
  for name in pairs(specs) do
    vim.lsp.commands[name] = function(command, ctx)
      M.run(command, ctx)
    end
  end
end

return M
