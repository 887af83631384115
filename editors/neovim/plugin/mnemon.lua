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
  bang = true,
  desc = "mnemon: recall {query} from the workspace's active Memory Spaces into a scratch buffer;"
    .. " ! picks a result and previews it",
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
  bang = true,
  desc = "mnemon: create a managed document from this (saved) file, optionally with {title}, and open it;"
    .. " a file that has one is offered the update (! always creates)",
})
create("MnemonDocSearch", run("MnemonDocSearch"), {
  nargs = "+",
  bang = true,
  desc = "mnemon: search the workspace's managed documents for {query} into the quickfix list; ! adds archived ones",
})
create("MnemonProviders", run("MnemonProviders"), {
  desc = "mnemon: pick a Memory Space provider (state, health, capabilities), then configure, enable, disable,"
    .. " test it, or create a space in it",
})
create("MnemonProposals", run("MnemonProposals"), {
  desc = "mnemon: review an assistant's workspace memory proposals: pick one, then Verify or Reject",
})
create("MnemonReview", run("MnemonReview"), {
  desc = "mnemon: memories whose cited code changed or is gone: pick one, then Still true (re-anchor), Edit or Remove",
})
create("MnemonImport", run("MnemonImport"), {
  desc = "mnemon: import the memory other assistants keep (CLAUDE.md, AGENTS.md, Cursor rules, ...): pick the items"
    .. " per source, then import the picked ones",
})
create("MnemonEntries", run("MnemonEntries"), {
  nargs = "?",
  complete = function()
    return { "memory", "user" }
  end,
  desc = "mnemon: pick a USER.md / MEMORY.md entry, then edit, remove, re-scope or change its importance",
})
create("MnemonCompact", run("MnemonCompact"), {
  nargs = "?",
  complete = function()
    return { "user", "memory" }
  end,
  desc = "mnemon: make room in USER.md (or MEMORY.md): pick numbered entries, then merge them into one text or"
    .. " drop them",
})
create("MnemonSpaces", run("MnemonSpaces"), {
  desc = "mnemon: pick a Memory Space, then activate, deactivate or recall from it",
})
create("MnemonSpaceCreate", run("MnemonSpaceCreate"), {
  nargs = "+",
  bang = true,
  desc = "mnemon: create the Memory Space {name} (asks what belongs in it), active for reading (! inactive)",
})
local function space_ids()
  return require("mnemon").all_space_ids()
end
create("MnemonSpaceActivate", run("MnemonSpaceActivate"), {
  nargs = 1,
  complete = space_ids,
  desc = "mnemon: activate the Memory Space {id} for reading (recall and the wake)",
})
create("MnemonSpaceDeactivate", run("MnemonSpaceDeactivate"), {
  nargs = 1,
  complete = space_ids,
  desc = "mnemon: deactivate the Memory Space {id} (kept, not recalled)",
})
create("MnemonDocuments", run("MnemonDocuments"), {
  bang = true,
  desc = "mnemon: pick a managed document, then open, archive or restore it; ! lists archived ones too",
})

-- <Plug> mappings (map them yourself, e.g. vim.keymap.set("x", "<leader>mr", "<Plug>(mnemon-remember)")).
local function plug(modes, name, rhs)
  for _, mode in ipairs(modes) do
    vim.api.nvim_set_keymap(mode, "<Plug>(" .. name .. ")", rhs, { noremap = true, silent = true })
  end
end
plug({ "n" }, "mnemon-remember", "<Cmd>MnemonRemember<CR>")
plug({ "x" }, "mnemon-remember", ":MnemonRemember<CR>")
plug({ "n" }, "mnemon-remember-branch", "<Cmd>MnemonRemember!<CR>")
plug({ "x" }, "mnemon-remember-branch", ":MnemonRemember!<CR>")
plug({ "n" }, "mnemon-recall", "<Cmd>lua vim.ui.input({ prompt = 'mnemon: recall: ' }, function(q)"
  .. " if q and vim.trim(q) ~= '' then require('mnemon.manage').recall_pick(q) end end)<CR>")
plug({ "n" }, "mnemon-wake", "<Cmd>MnemonWake<CR>")
plug({ "n" }, "mnemon-status", "<Cmd>MnemonStatus<CR>")
plug({ "n" }, "mnemon-entries", "<Cmd>MnemonEntries<CR>")
plug({ "n" }, "mnemon-spaces", "<Cmd>MnemonSpaces<CR>")
plug({ "n" }, "mnemon-documents", "<Cmd>MnemonDocuments<CR>")
plug({ "n" }, "mnemon-doc-create", "<Cmd>MnemonDocCreate<CR>")
plug({ "n" }, "mnemon-proposals", "<Cmd>MnemonProposals<CR>")
plug({ "n" }, "mnemon-review", "<Cmd>MnemonReview<CR>")
plug({ "n" }, "mnemon-import", "<Cmd>MnemonImport<CR>")
plug({ "n" }, "mnemon-codelens-run", "<Cmd>lua vim.lsp.codelens.run()<CR>")

-- :help mnemon without a manual :helptags: build doc/tags when the checkout has none (doc/tags is
-- shipped; this covers a copy without it). A read-only directory is left alone.
do
  local source = debug.getinfo(1, "S").source:sub(2)
  local doc = vim.fn.fnamemodify(source, ":p:h:h") .. "/doc"
  if vim.fn.filereadable(doc .. "/mnemon.txt") == 1 and vim.fn.filereadable(doc .. "/tags") == 0
      and vim.fn.filewritable(doc) == 2 then
    pcall(vim.cmd, "silent! helptags " .. vim.fn.fnameescape(doc))
  end
end

require("mnemon.packs").create_commands(create)  -- :MnemonPackExport, :MnemonPackImport
