-- Version shims: one code path for Neovim 0.7.2 through 0.11+.
--
-- 0.7 lacks vim.lsp.start, vim.lsp.get_clients, vim.fs and the colon-call client methods; 0.11
-- deprecates vim.lsp.start_client, get_active_clients and the dot-call client methods. Everything the
-- plugin does with the LSP client goes through this module.

local M = {}

local function has(version)
  return vim.fn.has("nvim-" .. version) == 1
end

M.has = has
M.has08 = has("0.8")
M.has010 = has("0.10")
M.has011 = has("0.11")

local uv = vim.uv or vim.loop
M.uv = uv

-- ------------------------------------------------------------------ clients

--- Every active LSP client, optionally filtered by `name`, `id` and `bufnr` (attached to that buffer).
function M.get_clients(filter)
  filter = filter or {}
  local bufnr = filter.bufnr
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local all
  if vim.lsp.get_clients then -- 0.10+
    all = vim.lsp.get_clients()
  else
    all = vim.lsp.get_active_clients()
  end
  local out = {}
  for _, client in ipairs(all) do
    local ok = true
    if filter.name and client.name ~= filter.name then
      ok = false
    end
    if ok and filter.id and client.id ~= filter.id then
      ok = false
    end
    if ok and bufnr and not vim.lsp.buf_is_attached(bufnr, client.id) then
      ok = false
    end
    if ok and M.is_stopped(client) then
      ok = false
    end
    if ok then
      table.insert(out, client)
    end
  end
  return out
end

function M.get_client_by_id(id)
  if not id then
    return nil
  end
  return vim.lsp.get_client_by_id(id)
end

function M.is_stopped(client)
  if M.has011 then
    return client:is_stopped()
  end
  return client.is_stopped()
end

--- Async request. Returns ok, request_id (ok is false when the client is gone).
function M.request(client, method, params, handler, bufnr)
  if M.has011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- Synchronous request (blocks up to `timeout_ms`); returns the response table ({result, err}) or nil.
function M.request_sync(client, method, params, timeout_ms, bufnr)
  if M.has011 then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

function M.cancel_request(client, request_id)
  if M.has011 then
    return client:cancel_request(request_id)
  end
  return client.cancel_request(request_id)
end

function M.stop(client, force)
  if M.has011 then
    return client:stop(force)
  end
  return client.stop(force)
end

--- Start a client for `config` and attach `bufnr`; returns the client id or nil.
--- 0.8+: vim.lsp.start (reuses a client with the same name and root_dir). 0.7: start_client +
--- buf_attach_client (the caller keeps the root -> client id table that reuses clients).
function M.start(config, bufnr)
  if vim.lsp.start then
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local id = vim.lsp.start_client(config)
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

function M.attach(bufnr, client_id)
  if vim.lsp.buf_is_attached(bufnr, client_id) then
    return true
  end
  return vim.lsp.buf_attach_client(bufnr, client_id)
end

-- ------------------------------------------------------------------ paths

--- Absolute path without a trailing slash (symlinks are kept as the user sees them).
function M.normalize(path)
  path = vim.fn.fnamemodify(path, ":p")
  if #path > 1 then
    path = path:gsub("/+$", "")
  end
  return path
end

local function dirname(path)
  local parent = path:match("^(.*)/[^/]*$")
  if parent == nil then
    return nil
  end
  if parent == "" then
    return "/"
  end
  return parent
end

M.dirname = dirname

--- Nearest directory at or above `path` holding one of `markers` (each checked with fs_stat, so a
--- `.git` file of a linked worktree counts as well as a `.git` directory). Markers are tried in order
--- in each directory; the nearest directory wins. `ignore(dir, marker)` may veto a hit.
function M.find_root(path, markers, ignore)
  if not path or path == "" then
    return nil
  end
  local dir = path
  local stat = uv.fs_stat(dir)
  if not stat or stat.type ~= "directory" then
    dir = dirname(dir)
  end
  while dir do
    for _, marker in ipairs(markers) do
      local candidate = (dir == "/" and "" or dir) .. "/" .. marker
      if uv.fs_stat(candidate) and not (ignore and ignore(dir, marker)) then
        return dir
      end
    end
    if dir == "/" then
      return nil
    end
    dir = dirname(dir)
  end
  return nil
end

-- ------------------------------------------------------------------ misc

--- vim.notify that is safe to call from any context.
function M.notify(msg, level)
  if vim.in_fast_event() then
    vim.schedule(function()
      vim.notify(msg, level)
    end)
  else
    vim.notify(msg, level)
  end
end

--- Fire `User <pattern>`; 0.8+ passes `data` to the callbacks (0.7 fires without it).
function M.user_event(pattern, data)
  local ok = pcall(vim.api.nvim_exec_autocmds, "User", { pattern = pattern, modeline = false, data = data })
  if not ok then
    pcall(vim.api.nvim_exec_autocmds, "User", { pattern = pattern, modeline = false })
  end
end

function M.set_option(bufnr, name, value)
  if vim.api.nvim_set_option_value and M.has010 then
    vim.api.nvim_set_option_value(name, value, { buf = bufnr })
  else
    vim.api.nvim_buf_set_option(bufnr, name, value)
  end
end

return M
