-- :checkhealth mnemon (0.7 .. 0.11+).
local M = {}

local function reporter()
  local h = vim.health
  if h and h.start then -- 0.10+
    return h.start, h.ok, h.warn, h.error
  end
  if h and h.report_start then -- 0.8, 0.9
    return h.report_start, h.report_ok, h.report_warn, h.report_error
  end
  local old = require("health") -- 0.7
  return old.report_start, old.report_ok, old.report_warn, old.report_error
end

--- How to install the server: mnemon-ls is not on PyPI, so pip installs it from the checkout this
--- plugin lives in (editors/neovim is two levels below the repository root), or from a checkout.
function M.install_hint()
  local source = debug.getinfo(1, "S").source:sub(2)
  local checkout = vim.fn.fnamemodify(source, ":p:h:h:h:h:h")
  if vim.fn.filereadable(checkout .. "/pyproject.toml") == 1 then
    return "pip install " .. vim.fn.shellescape(checkout) .. ", or setup({ cmd = ... })"
  end
  return "pip install <your mnemon-ls checkout>, or setup({ cmd = ... })"
end

function M.check()
  local start, ok, warn, error = reporter()
  local client = require("mnemon.client")
  start("mnemon")
  if vim.fn.has("nvim-0.7") == 1 then
    ok("Neovim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor))
  else
    error("Neovim 0.7 or newer is required")
  end
  local enabled = vim.lsp.is_enabled and vim.lsp.is_enabled("mnemon")
    or (type(vim.lsp._enabled_configs) == "table" and vim.lsp._enabled_configs.mnemon ~= nil)
  local cmd = client.config.cmd
  if client.configured then
    ok("require('mnemon').setup() was called")
  elseif enabled then
    ok("started by vim.lsp.enable('mnemon') (lsp/mnemon.lua); setup() is not needed")
    local lsp_config = vim.lsp.config and vim.lsp.config.mnemon
    if type(lsp_config) == "table" and type(lsp_config.cmd) == "table" then
      cmd = lsp_config.cmd
    end
  elseif vim.fn.has("nvim-0.11") == 1 then
    warn("no client will start: call require('mnemon').setup(), or vim.lsp.enable('mnemon')")
  else
    warn("setup() was not called: no client will start (add require('mnemon').setup() to your config)")
  end
  local exe = cmd[1]
  if exe and vim.fn.executable(exe) == 1 then
    ok("server command: " .. table.concat(cmd, " "))
  else
    error("server command not executable: " .. tostring(exe) .. " (" .. M.install_hint() .. ")")
  end
  local settings = client.config.settings
  if type(settings) == "function" then
    ok("settings: computed per root by your settings function")
  else
    local scope = type(settings) == "table" and settings.storageScope or nil
    if scope == nil or scope == vim.NIL then
      ok("storage: one root per workspace outside the repository (storageScope workspaces, the default); "
        .. "mnemon-ls in a terminal inside the workspace uses the same root")
    elseif scope == "workspace" then
      warn("storageScope = 'workspace' keeps memory in <root>/.mnemon inside the repository; "
        .. "the default ('workspaces') keeps it outside")
    else
      ok("storageScope = " .. tostring(scope))
    end
  end
  local clients = client.all()
  if #clients == 0 then
    warn("no mnemon-ls client is running (open a file inside a git repository or a .mnemon root)")
  end
  for _, c in ipairs(clients) do
    ok(string.format("client %d: root %s", c.id, tostring(c.config and c.config.root_dir)))
  end
end

return M
