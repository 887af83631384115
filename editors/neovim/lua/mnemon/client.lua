-- mnemon-ls clients: one per workspace root, found or started for a buffer; requests with a timeout;
-- showing files (window/showDocument, saved hand edits). The notification and request handlers are in
-- mnemon.handlers (client.handlers() builds the table).

local compat = require("mnemon.compat")

local M = {}

--- Version of the mnemon/* protocol this plugin speaks (compared with mnemon/status).
M.PROTOCOL_VERSION = 1

M.CMD_REMEMBER = "mnemon.server.rememberSelection"
M.CMD_CREATE_DOCUMENT = "mnemon.server.createDocumentFromFile"
M.CMD_UPDATE_DOCUMENT = "mnemon.server.updateDocumentFromFile"

M.defaults = {
  name = "mnemon",
  cmd = { "mnemon-ls", "serve" },
  cmd_env = nil,
  settings = {},
  root_markers = { ".git", ".mnemon" },
  filetypes = nil, -- nil: every file buffer inside a root
  autostart = true,
  timeout_ms = 10000,
  wake_split = "botright split",
  doc_split = "split",
  on_attach = nil,
  capabilities = nil,
}

--- The effective options (init.setup() replaces them; defaults serve vim.lsp.enable users).
M.config = vim.deepcopy(M.defaults)
M.configured = false

--- root directory -> client id of the clients this plugin started.
M.by_root = {}

--- client id -> list of tokens ({patterns}) of server commands awaiting their result (rememberSelection,
--- createDocumentFromFile); the server also sends a window/showMessage for each, which is swallowed
--- (the first message matching one of the token's patterns) because the plugin shows the result itself.
M.pending_commands = {}
local pending_commands = M.pending_commands
--- client id -> list of file basenames announced by mnemon/projectionRepaired; the server follows
--- each with a window/showMessage saying the same thing, which is swallowed.
M.pending_repairs = {}
local pending_repairs = M.pending_repairs

--- The last notifications received from any mnemon client ({method, params, client_id}), newest last.
M.events = {}

local levels = vim.log.levels

local function present(value)
  return value ~= nil and value ~= vim.NIL
end
M.present = present

local function notify(msg, level)
  compat.notify(msg, level or levels.INFO)
end
M.notify = notify

-- ------------------------------------------------------------------ errors

--- One line for an LSP error (a table {code, message, data} or a string).
function M.format_error(err)
  if type(err) ~= "table" then
    return tostring(err)
  end
  local msg = present(err.message) and tostring(err.message) or "unknown error"
  local data = err.data
  if type(data) == "table" and present(data.code) then
    msg = msg .. " [" .. tostring(data.code) .. "]"
  elseif present(err.code) and type(err.code) == "string" then
    msg = msg .. " [" .. err.code .. "]"
  end
  return msg
end

-- ------------------------------------------------------------------ roots

local function global_data_dir()
  local dir = os.getenv("MNEMON_DATA_DIR")
  if dir == nil or dir == "" then
    dir = compat.uv.os_homedir() .. "/.mnemon"
  end
  return compat.normalize(vim.fn.expand(dir))
end

--- A global store (`~/.mnemon`, or `$MNEMON_DATA_DIR` when it is called `.mnemon`) is not a workspace
--- marker: without this, every file below $HOME would get $HOME as its root.
local function ignore_marker(dir, marker)
  if marker ~= ".mnemon" then
    return false
  end
  if compat.normalize(dir) == compat.normalize(compat.uv.os_homedir()) then
    return true
  end
  local candidate = (dir == "/" and "" or dir) .. "/.mnemon"
  return compat.normalize(candidate) == global_data_dir()
end

--- Whether the buffer is a file buffer the plugin should look at.
function M.eligible(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return false
  end
  if vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return false
  end
  local fts = M.config.filetypes
  if fts and not vim.tbl_contains(fts, vim.bo[bufnr].filetype) then
    return false
  end
  return true
end

--- Workspace root of a path: the nearest directory upward holding a root marker (`.git` dir or file,
--- `.mnemon`), or nil.
function M.root_for_path(path)
  if not path or path == "" then
    return nil
  end
  return compat.find_root(compat.normalize(path), M.config.root_markers, ignore_marker)
end

function M.root_for_buf(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not M.eligible(bufnr) then
    return nil
  end
  return M.root_for_path(vim.api.nvim_buf_get_name(bufnr))
end

function M.root_uri(root)
  return vim.uri_from_fname(root)
end

-- ------------------------------------------------------------------ hand edits, files

--- Open the hand edit saved by the last repair (the "Open edit" action of the server's message).
function M.open_last_edit()
  if not M.last_saved_edit then
    notify("mnemon: no saved hand edit in this session", levels.INFO)
    return false
  end
  M.show_file(M.last_saved_edit, { focus = true })
  return true
end

--- The window of the current tab page showing `path`, or nil.
local function window_showing(path)
  local want = compat.normalize(path)
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win))
    if name ~= "" and compat.normalize(name) == want then
      return win
    end
  end
  return nil
end

--- Show the file `path`: focus the window of the current tab page already showing it, else open it with
--- `config.doc_split` (default "split"). opts: line (1-based, moves the cursor), focus (default true;
--- false returns to the window that was current). Returns the window. Throws on a Vim error.
function M.show_file(path, opts)
  opts = opts or {}
  local previous = vim.api.nvim_get_current_win()
  local win = window_showing(path)
  if win then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd(M.config.doc_split .. " " .. vim.fn.fnameescape(path))
    win = vim.api.nvim_get_current_win()
  end
  if opts.line then
    local last = vim.api.nvim_buf_line_count(vim.api.nvim_win_get_buf(win))
    pcall(vim.api.nvim_win_set_cursor, win, { math.max(1, math.min(opts.line, last)), 0 })
  end
  if opts.focus == false and vim.api.nvim_win_is_valid(previous) then
    vim.api.nvim_set_current_win(previous)
  end
  return win
end

--- Handlers for a mnemon-ls client config (also used by lsp/mnemon.lua); also registers the
--- client-side code-action commands (mnemon.actions). The handlers live in mnemon.handlers.
function M.handlers()
  require("mnemon.actions").register()
  return vim.tbl_extend("keep", require("mnemon.maintenance").handlers(), -- capacity maintenance notices
    require("mnemon.handlers").handlers())
end

-- ------------------------------------------------------------------ clients

local function resolve_settings(root)
  local settings = M.config.settings
  if type(settings) == "function" then
    local ok, value = pcall(settings, root)
    if not ok then
      notify("mnemon: settings function failed: " .. tostring(value), levels.ERROR)
      value = {}
    end
    settings = value
  end
  settings = vim.deepcopy(settings or {})
  if vim.tbl_isempty(settings) then
    settings = vim.empty_dict()
  end
  return settings
end

--- The vim.lsp client config for a root.
function M.make_config(root)
  local settings = resolve_settings(root)
  local cfg = M.config
  return {
    name = cfg.name,
    cmd = cfg.cmd,
    cmd_env = cfg.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = M.root_uri(root), name = vim.fn.fnamemodify(root, ":t") } },
    init_options = { mnemon = settings },
    settings = { mnemon = settings },
    handlers = M.handlers(),
    capabilities = cfg.capabilities,
    on_attach = M.on_attach,
    on_exit = function(_, _, client_id)
      if M.by_root[root] == client_id then
        M.by_root[root] = nil
      end
      pending_commands[client_id] = nil
      pending_repairs[client_id] = nil
    end,
  }
end

--- on_attach of every mnemon client: code lenses kept fresh (mnemon.review), then the user's `on_attach`.
function M.on_attach(c, bufnr)
  require("mnemon.review").attach(c, bufnr)
  if M.config.on_attach then
    M.config.on_attach(c, bufnr)
  end
end

local function client_root(client)
  local root = client.config and client.config.root_dir
  if root then
    return compat.normalize(root)
  end
  return nil
end

--- A running mnemon client for `root` (ours or one started by vim.lsp.enable), or nil.
function M.find_client(root)
  local id = M.by_root[root]
  local client = compat.get_client_by_id(id)
  if client and not compat.is_stopped(client) then
    return client
  end
  M.by_root[root] = nil
  for _, c in ipairs(compat.get_clients({ name = M.config.name })) do
    if client_root(c) == root then
      return c
    end
  end
  return nil
end

--- Attach `bufnr` to the client of its root, starting one when `start` (default true); returns the
--- client (possibly still initializing) and the root, or nil and a reason.
function M.ensure(bufnr, start)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local root = M.root_for_buf(bufnr)
  if not root then
    return nil, nil, "not inside a git repository or a .mnemon root"
  end
  local client = M.find_client(root)
  if client then
    compat.attach(bufnr, client.id)
    return client, root
  end
  if start == false then
    return nil, root, "no mnemon-ls client for " .. root
  end
  local ok, id = pcall(compat.start, M.make_config(root), bufnr)
  if not ok or not id then
    return nil, root, "could not start mnemon-ls (" .. table.concat(M.config.cmd, " ") .. "): " .. tostring(id)
  end
  M.by_root[root] = id
  return compat.get_client_by_id(id), root
end

--- The client serving `bufnr`: an attached mnemon client, else the client of its root (started when
--- setup() was called). Returns client, root or nil, nil, reason.
function M.for_buf(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  for _, c in ipairs(compat.get_clients({ name = M.config.name, bufnr = bufnr })) do
    return c, client_root(c)
  end
  local pinned = vim.b[bufnr].mnemon_root -- set on the wake snapshot buffer
  if type(pinned) == "string" then
    local c = M.find_client(pinned)
    if c then
      return c, pinned
    end
  end
  local client, root, reason = M.ensure(bufnr, M.configured)
  if client then
    return client, root
  end
  if not root and not M.eligible(bufnr) then
    -- not a file buffer (help, quickfix, terminal...): the only running client, if there is one
    local all = M.all()
    if #all == 1 then
      return all[1], client_root(all[1])
    end
  end
  if not M.configured and root then
    reason = reason .. " (call require('mnemon').setup() or vim.lsp.enable('mnemon'))"
  end
  return nil, root, reason
end

--- Every running mnemon client.
function M.all()
  local seen, out = {}, {}
  for _, c in ipairs(compat.get_clients({ name = M.config.name })) do
    seen[c.id] = true
    table.insert(out, c)
  end
  for _, id in pairs(M.by_root) do
    local c = compat.get_client_by_id(id)
    if c and not seen[id] and not compat.is_stopped(c) then
      table.insert(out, c)
    end
  end
  return out
end

-- ------------------------------------------------------------------ requests

--- Call `fn(client)` once `client` is initialized (polls; gives up after timeout_ms with `on_fail`).
function M.when_ready(client, fn, on_fail)
  local deadline = compat.uv.now() + M.config.timeout_ms
  local function check()
    if compat.is_stopped(client) then
      on_fail({ message = "mnemon-ls stopped before it was ready" })
    elseif client.initialized then
      fn(client)
    elseif compat.uv.now() >= deadline then
      on_fail({ message = "mnemon-ls did not finish initializing within " .. M.config.timeout_ms .. " ms" })
    else
      vim.defer_fn(check, 20)
    end
  end
  check()
end

--- Send `method` to `client`; `callback(err, result)` runs exactly once, on the main loop, with
--- err = {code?, message, data?} on a server error, a timeout or a dead client. Never throws.
function M.request(client, method, params, callback, opts)
  opts = opts or {}
  local timeout = opts.timeout_ms or M.config.timeout_ms
  local done = false
  local function finish(err, result)
    if done then
      return
    end
    done = true
    local ok, problem = pcall(callback, err, result)
    if not ok then
      notify("mnemon: plugin error while handling " .. method .. ": " .. tostring(problem), levels.ERROR)
    end
  end
  M.when_ready(client, function()
    local ok, sent, request_id = pcall(compat.request, client, method, params, function(err, result)
      vim.schedule(function()
        finish(err, result)
      end)
    end, opts.bufnr or vim.api.nvim_get_current_buf())
    if not ok then
      finish({ message = "request failed: " .. tostring(sent) })
      return
    end
    if not sent then
      finish({ message = "mnemon-ls is not running" })
      return
    end
    vim.defer_fn(function()
      if not done then
        pcall(compat.cancel_request, client, request_id)
        finish({ code = "timeout", message = string.format("%s timed out after %d ms", method, timeout) })
      end
    end, timeout)
  end, finish)
end

--- workspace/executeCommand `command` with one argument object. The first window/showMessage of this
--- client matching one of the Lua patterns in the list `swallow` that arrives before the result is
--- swallowed (the server announces each command's outcome that way; the plugin shows the result itself).
function M.execute_command(client, command, argument, swallow, callback, opts)
  local token = { patterns = swallow }
  pending_commands[client.id] = pending_commands[client.id] or {}
  table.insert(pending_commands[client.id], token)
  M.request(client, "workspace/executeCommand", { command = command, arguments = { argument } },
    function(err, result)
      local tokens = pending_commands[client.id]
      if tokens and not token.swallowed then
        for i, t in ipairs(tokens) do
          if t == token then
            table.remove(tokens, i)
            break
          end
        end
      end
      callback(err, result)
    end, opts)
end

--- rememberSelection through workspace/executeCommand; the server's own showMessage for it is swallowed.
function M.execute_remember(client, argument, callback, opts)
  M.execute_command(client, M.CMD_REMEMBER, argument, { "^mnemon:" }, callback, opts)
end

--- createDocumentFromFile through workspace/executeCommand; the server's showMessage ("mnemon: document
--- created: ..." or "mnemon: no document created: ...") is swallowed.
function M.execute_create_document(client, argument, callback, opts)
  M.execute_command(client, M.CMD_CREATE_DOCUMENT, argument, { "^mnemon: document created", "^mnemon: no document created" }, callback, opts)
end

return M
