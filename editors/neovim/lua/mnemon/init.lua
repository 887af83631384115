-- mnemon.nvim: Neovim client for mnemon-ls (workspace-scoped, git-branch-aware memory).
--
--   require("mnemon").setup({ cmd = {...}, settings = {...}, root_markers = {...} })
--
-- See :help mnemon.

local compat = require("mnemon.compat")
local client = require("mnemon.client")

local M = {}

local levels = vim.log.levels
local notify = client.notify
local present = client.present

M.PROTOCOL_VERSION = client.PROTOCOL_VERSION

-- ------------------------------------------------------------------ setup

local function validate(opts)
  if type(opts.cmd) == "string" then
    opts.cmd = { opts.cmd }
  end
  vim.validate({
    cmd = { opts.cmd, "table" },
    settings = { opts.settings, { "table", "function" } },
    root_markers = { opts.root_markers, "table" },
    filetypes = { opts.filetypes, "table", true },
    autostart = { opts.autostart, "boolean" },
    timeout_ms = { opts.timeout_ms, "number" },
    wake_split = { opts.wake_split, "string" },
    doc_split = { opts.doc_split, "string" },
    on_attach = { opts.on_attach, "function", true },
    name = { opts.name, "string" },
  })
  if #opts.cmd == 0 then
    error("mnemon: setup: cmd must not be empty")
  end
end

local failed_roots = {}

--- Start (or reuse) the client of `bufnr`'s root and attach the buffer, when autostart is on.
function M.autostart(bufnr)
  if not client.config.autostart or not client.eligible(bufnr) then
    return
  end
  local root = client.root_for_buf(bufnr)
  if not root or failed_roots[root] then
    return
  end
  local ok, c, _, reason = pcall(client.ensure, bufnr, true)
  if not ok or not c then
    failed_roots[root] = true
    notify("mnemon: " .. tostring(ok and reason or c), levels.ERROR)
  end
end

--- Configure the plugin and start clients for file buffers inside a git or `.mnemon` root.
--- opts: cmd, cmd_env, settings (table or function(root) -> table; camelCase mnemon-ls settings),
--- root_markers, filetypes, autostart, timeout_ms, wake_split, doc_split, on_attach, capabilities, name.
function M.setup(opts)
  local cfg = vim.tbl_deep_extend("force", vim.deepcopy(client.defaults), opts or {})
  -- lists replace, they do not merge
  for _, key in ipairs({ "cmd", "root_markers", "filetypes" }) do
    if opts and opts[key] ~= nil then
      cfg[key] = opts[key]
    end
  end
  if opts and opts.settings ~= nil then
    cfg.settings = opts.settings
  end
  validate(cfg)
  client.config = cfg
  client.configured = true
  failed_roots = {}

  local group = vim.api.nvim_create_augroup("mnemon", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost", "FileType" }, {
    group = group,
    callback = function(args)
      M.autostart(args.buf)
    end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      M.autostart(bufnr)
    end
  end
end

-- ------------------------------------------------------------------ selection

-- 0-based exclusive end byte of the character starting at 1-based byte `col` of `line`.
local function char_end(line, col)
  local len = #line
  if col >= len then
    return len
  end
  local byte = line:byte(col)
  local n = 1
  if byte >= 0xF0 then
    n = 4
  elseif byte >= 0xE0 then
    n = 3
  elseif byte >= 0xC0 then
    n = 2
  end
  return math.min(col - 1 + n, len)
end

local function buf_line(bufnr, row)
  return vim.api.nvim_buf_get_lines(bufnr, row - 1, row, false)[1] or ""
end

--- The text a range command works on. From a visual selection (a two-item range equal to the lines of
--- `'<` and `'>`): the exact characters for charwise `v`, whole lines for `V`, the block for CTRL-V.
--- Otherwise lines line1..line2. `range` is the command's `range` count (0, 1 or 2; nil: assume 2).
--- Returns text, kind ("char" | "line" | "block").
function M.selection_text(bufnr, line1, line2, range)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local s = vim.fn.getpos("'<")
  local e = vim.fn.getpos("'>")
  local mode = vim.fn.visualmode()
  local from_visual = (range == nil or range == 2) and s[2] > 0 and e[2] > 0 and s[2] == line1 and e[2] == line2
  if from_visual and mode == "v" then
    local sline, eline = buf_line(bufnr, s[2]), buf_line(bufnr, e[2])
    local scol = math.min(s[3] - 1, #sline)
    local ecol
    if vim.o.selection == "exclusive" then
      ecol = math.min(e[3] - 1, #eline)
    else
      ecol = char_end(eline, e[3])
    end
    if s[2] == e[2] and ecol < scol then
      ecol = scol
    end
    local lines = vim.api.nvim_buf_get_text(bufnr, s[2] - 1, scol, e[2] - 1, ecol, {})
    return table.concat(lines, "\n"), "char"
  end
  if from_visual and mode == "\22" then
    local lines
    if vim.fn.exists("*getregion") == 1 then
      lines = vim.fn.getregion(s, e, { type = mode })
    else
      local c1, c2 = math.min(s[3], e[3]), math.max(s[3], e[3])
      lines = {}
      for row = s[2], e[2] do
        local line = buf_line(bufnr, row)
        table.insert(lines, line:sub(c1, char_end(line, c2)))
      end
    end
    return table.concat(lines, "\n"), "block"
  end
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, line1 - 1, line2, false), "\n"), "line"
end

-- ------------------------------------------------------------------ helpers

local util = require("mnemon.util")
local done = util.done
local client_or_fail = util.client_or_fail
local workspace_row = util.workspace_row
local receipt_text = util.receipt_text

-- ------------------------------------------------------------------ current branch

--- `callback(err, branch)`: the current git branch of `root` as the server sees it (mnemon/status).
function M.current_branch(c, root, callback)
  client.request(c, "mnemon/status", vim.empty_dict(), function(err, result)
    if err then
      return callback({ message = "mnemon/status failed: " .. client.format_error(err) })
    end
    local row = workspace_row(result, root)
    if not row then
      return callback({ message = "mnemon-ls does not serve " .. root })
    end
    if not present(row.branch) or row.branch == "" then
      local why = present(row.branchReason) and tostring(row.branchReason)
        or (row.detached and "detached HEAD" or "no branch")
      return callback({ message = string.format("%s has no current git branch (%s)", root, why) })
    end
    callback(nil, row.branch)
  end)
end

-- ------------------------------------------------------------------ remember

--- Remember text as a MEMORY.md entry (workspace/executeCommand mnemon.server.rememberSelection), or,
--- with `space_id`, as an item of that Memory Space (the command's `spaceId`; with `branch_scoped` the
--- item is tagged `branch:<current branch>`).
--- opts: bufnr, text (else line1/line2/range -> selection_text), branch_scoped (bool), importance, space_id.
function M.remember(opts, callback)
  opts = opts or {}
  local bufnr = (opts.bufnr == nil or opts.bufnr == 0) and vim.api.nvim_get_current_buf() or opts.bufnr
  local text = opts.text
  local range = nil
  if text == nil then
    local line1 = opts.line1 or vim.api.nvim_win_get_cursor(0)[1]
    local line2 = opts.line2 or line1
    text = M.selection_text(bufnr, line1, line2, opts.range or 0)
    -- the selected lines (LSP range, 0-based, end exclusive): the server cites them when the buffer is saved
    range = { start = { line = line1 - 1, character = 0 }, ["end"] = { line = line2, character = 0 } }
  end
  if vim.trim(text) == "" then
    local msg = "mnemon: nothing to remember: the selection is empty"
    notify(msg, levels.ERROR)
    return done(callback, { message = msg })
  end
  local c, root = client_or_fail(bufnr, callback)
  if not c then
    return
  end
  local argument = { uri = vim.uri_from_bufnr(bufnr), text = text, range = range }
  if opts.importance then
    argument.importance = opts.importance
  end
  local space_id = opts.space_id
  if space_id ~= nil and (type(space_id) ~= "string" or vim.trim(space_id) == "") then
    local msg = "mnemon: not remembered: space= needs a Memory Space id"
    notify(msg, levels.ERROR)
    return done(callback, { message = msg })
  end
  if space_id then
    argument.spaceId = vim.trim(space_id)
  end

  local function send(branch)
    if branch then
      argument.branches = { branch }
    end
    client.execute_remember(c, argument, function(err, result)
      if not util.reply_ok("remember", err, result, callback, { failed = "not remembered", whole = true }) then
        return
      end
      if result.success == false then
        local e = type(result.error) == "table" and result.error or {}
        local msg = "mnemon: not remembered: " .. tostring(present(e.message) and e.message or "unknown error")
        if present(e.code) then
          msg = msg .. " [" .. tostring(e.code) .. "]"
        end
        if argument.spaceId then
          msg = msg .. " (space=" .. argument.spaceId .. ")"
        end
        notify(msg, levels.ERROR)
        return done(callback, { message = msg, data = e })
      end
      local scope = branch and (" (branch " .. branch .. ")") or ""
      if argument.spaceId then
        -- a space receipt: {status, action, spaceId, spaceName, id, message, activated}
        local msg = string.format("mnemon: %s%s", tostring(present(result.message) and result.message
          or result.status), scope)
        local where = present(result.spaceName) and tostring(result.spaceName) or argument.spaceId
        msg = msg .. string.format(" [space %s (%s)%s]", where, tostring(present(result.spaceId) and result.spaceId
          or argument.spaceId), present(result.id) and (", item " .. tostring(result.id)) or "")
        if result.activated == true then
          -- what activating it changed (seed 000): a remember that names no space needs exactly one active
          local active = {}
          for _, s in ipairs(type(result.activeSpaces) == "table" and result.activeSpaces or {}) do
            active[#active + 1] = tostring(s.name)
          end
          msg = msg .. " (the space was inactive and is now active"
          if #active > 1 then
            msg = msg .. string.format("; %d spaces are active (%s), so a remember that names no space must name one",
              #active, table.concat(active, ", "))
          end
          msg = msg .. string.format("; :MnemonSpaceDeactivate %s makes it inactive again)",
            tostring(present(result.spaceId) and result.spaceId or argument.spaceId))
        end
        notify(msg, (result.status == "committed" or result.status == "skipped") and levels.INFO or levels.WARN)
        return done(callback, nil, result)
      end
      notify(string.format("mnemon: %s%s %s", tostring(result.message), scope, receipt_text("MEMORY.md", result)),
        levels.INFO)
      require("mnemon.statusline").invalidate(root)
      done(callback, nil, result)
    end, { bufnr = bufnr })
  end

  if opts.branch_scoped then
    M.current_branch(c, root, function(err, branch)
      if err then
        local msg = "mnemon: cannot remember for the current branch: " .. err.message
        notify(msg, levels.ERROR)
        return done(callback, { message = msg })
      end
      send(branch)
    end)
  else
    send(nil)
  end
end

-- ------------------------------------------------------------------ wake, recall, status (lua/mnemon/views.lua)

local views = require("mnemon.views")
M.wake = views.wake
M.format_recall = views.format_recall
M.recall = views.recall
M.format_status = views.format_status
M.status = views.status

-- ------------------------------------------------------------------ remember: completion, arguments

--- Ids of the active Memory Spaces of the current buffer's workspace (synchronous, for completion;
--- {} when no initialized client serves the buffer).
function M.space_ids()
  local c, root = client.for_buf(0)
  if not c or not c.initialized then
    return {}
  end
  local ok, response = pcall(compat.request_sync, c, "mnemon/spaces/list",
    { workspace = client.root_uri(root), activeOnly = true }, 1500, vim.api.nvim_get_current_buf())
  if not ok or type(response) ~= "table" or type(response.result) ~= "table" then
    return {}
  end
  local ids = {}
  for _, space in ipairs(type(response.result.spaces) == "table" and response.result.spaces or {}) do
    if present(space.id) then
      table.insert(ids, tostring(space.id))
    end
  end
  return ids
end

--- Completion of :MnemonRemember's argument: `space=<id>` of the active spaces.
function M.complete_remember(arglead)
  if not ("space="):find(arglead, 1, true) and arglead:sub(1, 6) ~= "space=" then
    return {}
  end
  local out = {}
  for _, id in ipairs(M.space_ids()) do
    local item = "space=" .. id
    if item:sub(1, #arglead) == arglead then
      table.insert(out, item)
    end
  end
  return out
end

--- Parse :MnemonRemember's argument: "" or "space=<id>". Returns space_id (or nil) and an error message.
function M.parse_remember_args(args)
  args = vim.trim(args or "")
  if args == "" then
    return nil, nil
  end
  local id = args:match("^space=(%S+)$")
  if not id then
    return nil, 'unknown argument "' .. args .. '" (expected space=<id>)'
  end
  return id, nil
end

-- ------------------------------------------------------------------ forget

--- The hint of a remove whose text matches several entries (the error's data.matches), or nil.
local function matches_hint(err)
  local data = type(err) == "table" and err.data
  if type(data) == "table" and present(data.matches) then
    return string.format("(%s entries match; use a longer text)", tostring(data.matches))
  end
end

--- Remove the MEMORY.md entry matching `text` (mnemon/runtime/mutate action=remove). opts: bufnr, target.
function M.forget(text, opts, callback)
  opts = opts or {}
  local bufnr = (opts.bufnr == nil or opts.bufnr == 0) and vim.api.nvim_get_current_buf() or opts.bufnr
  if type(text) ~= "string" or vim.trim(text) == "" then
    local msg = "mnemon: :MnemonForget needs the text of the entry to remove (or a selection)"
    notify(msg, levels.ERROR)
    return done(callback, { message = msg })
  end
  local c, root = client_or_fail(bufnr, callback)
  if not c then
    return
  end
  local target = opts.target or "memory"
  local params = { workspace = client.root_uri(root), action = "remove", target = target, oldText = text }
  client.request(c, "mnemon/runtime/mutate", params, function(err, result)
    if not util.reply_ok("forget", err, result, callback, { failed = "not forgotten", hint = matches_hint }) then
      return
    end
    local file = target == "user" and "USER.md" or "MEMORY.md"
    local msg = string.format("mnemon: %s %s", tostring(result.message), receipt_text(file, result))
    if present(result.removed) then
      local removed = tostring(result.removed):gsub("%s+", " ")
      if #removed > 60 then
        removed = removed:sub(1, 57) .. "..."
      end
      msg = msg .. string.format(' (removed "%s")', removed)
    end
    notify(msg, levels.INFO)
    require("mnemon.statusline").invalidate(root)
    done(callback, nil, result)
  end, { bufnr = bufnr })
end

-- ------------------------------------------------------------------ documents (lua/mnemon/documents.lua)

local documents = require("mnemon.documents")
M.doc_create = documents.doc_create
M.search_items = documents.search_items
M.doc_search = documents.doc_search

-- ------------------------------------------------------------------ management, statusline

local manage = require("mnemon.manage")
M.entries = manage.entries
M.edit_entry = manage.edit_entry
M.remove_entry = manage.remove_entry
M.scope_entry = manage.scope_entry
M.set_importance = manage.set_importance
M.read_entries = manage.read_entries
M.spaces = manage.spaces
M.list_spaces = manage.list_spaces
M.space_create = manage.space_create
M.space_activate = manage.space_activate
M.space_deactivate = manage.space_deactivate
M.documents = manage.documents
M.list_documents = manage.list_documents
M.doc_archive = manage.doc_archive
M.doc_restore = manage.doc_restore
M.doc_update_from_file = manage.doc_update_from_file
M.recall_pick = manage.recall_pick
--- :MnemonProviders (lua/mnemon/providers.lua): pick a provider, then an action.
M.providers = function(opts, callback)
  return require("mnemon.providers").pick(opts, callback)
end

--- Statusline component: branch and MEMORY.md usage of the current buffer's workspace ("" without a
--- client); never blocks (see lua/mnemon/statusline.lua).
function M.statusline()
  local ok, text = pcall(require("mnemon.statusline").component)
  return ok and text or ""
end

--- Ids of every Memory Space of the current buffer's workspace (synchronous, for completion).
function M.all_space_ids()
  local c, root = client.for_buf(0)
  if not c or not c.initialized then
    return {}
  end
  local ok, response = pcall(compat.request_sync, c, "mnemon/spaces/list", { workspace = client.root_uri(root) },
    1500, vim.api.nvim_get_current_buf())
  if not ok or type(response) ~= "table" or type(response.result) ~= "table" then
    return {}
  end
  local ids = {}
  for _, space in ipairs(type(response.result.spaces) == "table" and response.result.spaces or {}) do
    table.insert(ids, tostring(space.id))
  end
  return ids
end

-- ------------------------------------------------------------------ user commands (lua/mnemon/commands.lua)

M.commands = require("mnemon.commands")

return M
