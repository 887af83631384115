-- Optional Telescope extension (loaded by Telescope itself, never by mnemon.nvim: without Telescope this
-- file is never read). `require("telescope").load_extension("mnemon")`, then
--
--   :Telescope mnemon entries     USER.md / MEMORY.md entries (preview: the full entry); <CR>: the actions
--   :Telescope mnemon recall      prompts for a query; results with their full text in the previewer
--   :Telescope mnemon documents   managed documents (preview: the file); <CR>: open, archive, restore
--   :Telescope mnemon spaces      Memory Spaces; <CR>: activate, deactivate, recall from it
--
-- The lists and every action are mnemon.manage's (the same requests as the commands).

local ok, telescope = pcall(require, "telescope")
if not ok then
  return {}
end

local pickers = require("telescope.pickers")
local finders = require("telescope.finders")
local previewers = require("telescope.previewers")
local actions = require("telescope.actions")
local action_state = require("telescope.actions.state")
local conf = require("telescope.config").values

local manage = require("mnemon.manage")

local function pick(title, items, display, preview_lines, on_choice, opts)
  opts = opts or {}
  pickers.new(opts, {
    prompt_title = title,
    finder = finders.new_table({
      results = items,
      entry_maker = function(item)
        local text = display(item)
        return { value = item, display = text, ordinal = text }
      end,
    }),
    sorter = conf.generic_sorter(opts),
    previewer = previewers.new_buffer_previewer({
      define_preview = function(self, entry)
        vim.api.nvim_buf_set_lines(self.state.bufnr, 0, -1, false, preview_lines(entry.value))
        vim.bo[self.state.bufnr].filetype = "markdown"
      end,
    }),
    attach_mappings = function(bufnr)
      actions.select_default:replace(function()
        local entry = action_state.get_selected_entry()
        actions.close(bufnr)
        if entry then
          on_choice(entry.value)
        end
      end)
      return true
    end,
  }):find()
end

local function entries(opts)
  manage.read_entries({}, function(err, list, revision)
    if err or #list == 0 then
      return
    end
    pick("mnemon entries", list, manage.format_entry, function(entry)
      return vim.split(entry.content or "", "\n", { plain = true })
    end, function(entry)
      manage.entry_menu(entry, revision, {})
    end, opts)
  end)
end

local function recall(opts)
  opts = opts or {}
  local function run(query)
    if not query or vim.trim(query) == "" then
      return
    end
    local c, root = require("mnemon.client").for_buf(0)
    if not c then
      return manage.recall_pick(query) -- says why
    end
    require("mnemon.client").request(c, "mnemon/recall", { workspace = require("mnemon.client").root_uri(root),
      query = vim.trim(query) }, function(err, result)
      local items = not err and type(result) == "table" and result.results or {}
      if #items == 0 then
        return manage.recall_pick(query) -- the same message as the command
      end
      pick("mnemon recall: " .. query, items, manage.format_recall_item, manage.preview_lines, manage.show_preview, opts)
    end)
  end
  if opts.query then
    run(opts.query)
  else
    vim.ui.input({ prompt = "mnemon: recall: " }, run)
  end
end

local function documents(opts)
  manage.list_documents({ include_archived = true }, function(err, docs)
    if err or #docs == 0 then
      return
    end
    pick("mnemon documents", docs, manage.format_document, function(doc)
      local okr, lines = pcall(vim.fn.readfile, tostring(doc.path))
      return okr and lines or { "(cannot read " .. tostring(doc.path) .. ")" }
    end, function(doc)
      manage.document_menu(doc, {})
    end, opts)
  end)
end

local function spaces(opts)
  manage.list_spaces({}, function(err, list)
    if err or #list == 0 then
      return
    end
    pick("mnemon spaces", list, manage.format_space, function(space)
      return { "# " .. tostring(space.name), "", "id " .. tostring(space.id), "", tostring(space.description) }
    end, function(space)
      manage.space_menu(space, {})
    end, opts)
  end)
end

return telescope.register_extension({
  exports = { mnemon = entries, entries = entries, recall = recall, documents = documents, spaces = spaces },
})
