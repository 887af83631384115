-- vim.lsp.Config for Neovim 0.11+:
--
--   vim.lsp.enable("mnemon")
--   -- optional settings: vim.lsp.config("mnemon", { settings = { mnemon = { wakeBudgetChars = 32768 } } })
--
-- The root is the nearest directory upward with `.git` (directory or file) or `.mnemon`; buffers outside
-- such a root get no client. The `mnemon` settings are sent both as initializationOptions and as the
-- answer to workspace/configuration (section "mnemon").
local client = require("mnemon.client")

---@type vim.lsp.Config
return {
  cmd = { "mnemon-ls", "serve" },
  root_dir = function(bufnr, on_dir)
    local root = client.root_for_buf(bufnr)
    if root then
      on_dir(root)
    end
  end,
  settings = { mnemon = vim.empty_dict() },
  handlers = client.handlers(),
  on_attach = client.on_attach, -- code lenses on cited code kept fresh (mnemon.review)
  before_init = function(params, config)
    local settings = config.settings and config.settings.mnemon
    if type(settings) ~= "table" or vim.tbl_isempty(settings) then
      settings = vim.empty_dict()
    end
    local init = params.initializationOptions
    if type(init) ~= "table" then
      init = {}
    end
    if init.mnemon == nil then
      init.mnemon = settings
    end
    params.initializationOptions = init
  end,
}
