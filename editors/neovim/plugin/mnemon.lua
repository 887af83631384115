-- mnemon.nvim user commands. Clients start only after require("mnemon").setup() (or, on Neovim 0.11+,
-- vim.lsp.enable("mnemon") with the bundled lsp/mnemon.lua); the commands work with either.
if vim.g.loaded_mnemon then
  return
end
vim.g.loaded_mnemon = true

if vim.fn.has("nvim-0.7") ~= 1 then
  vim.api.nvim_err_writeln("mnemon.nvim needs Neovim 0.7 or newer")
  return
end

local function run(name)
  return function(cmd)
    require("mnemon").commands[name](cmd)
  end
end

local create = vim.api.nvim_create_user_command

create("MnemonRemember", run("MnemonRemember"), {
  range = true,
  bang = true,
  nargs = "?",
  complete = function(arglead)
    return require("mnemon").complete_remember(arglead)
  end,
  desc = "mnemon: remember the selection (or lines) in MEMORY.md, or with space=<id> in that Memory Space;"
    .. " ! scopes it to the current git branch",
})
create("MnemonRecall", run("MnemonRecall"), {
  nargs = "+",
  desc = "mnemon: recall {query} from the workspace's active Memory Spaces into a scratch buffer",
})
create("MnemonWake", run("MnemonWake"), {
  nargs = "?",
  desc = "mnemon: show the wake snapshot of this workspace (optionally for another branch)",
})
create("MnemonStatus", run("MnemonStatus"), {
  desc = "mnemon: server version, protocol, and each workspace's branch, entries and usage",
})
create("MnemonOpenEdit", run("MnemonOpenEdit"), {
  desc = "mnemon: open the copy of the last hand edit of USER.md / MEMORY.md the server saved (runtime/edits/)",
})
create("MnemonForget", run("MnemonForget"), {
  nargs = "?",
  range = true,
  bang = true,
  desc = "mnemon: remove the MEMORY.md entry matching {text} (or the selection); ! targets USER.md",
})
create("MnemonDocCreate", run("MnemonDocCreate"), {
  nargs = "?",
  desc = "mnemon: create a managed document from this (saved) file, optionally with {title}, and open it",
})
create("MnemonDocSearch", run("MnemonDocSearch"), {
  nargs = "+",
  bang = true,
  desc = "mnemon: search the workspace's managed documents for {query} into the quickfix list; ! adds archived ones",
})
create("MnemonProposals", run("MnemonProposals"), {
  desc = "mnemon: review an assistant's workspace memory proposals: pick one, then Verify or Reject",
})

require("mnemon.packs").create_commands(create)  -- :MnemonPackExport, :MnemonPackImport
