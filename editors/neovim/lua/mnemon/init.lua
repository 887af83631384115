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

local query_prelude = util.query_prelude

local function same_uri(a, b)
  if not present(a) or not present(b) then
    return false
  end
  if a == b then
    return true
  end
  local ok1, p1 = pcall(vim.uri_to_fname, a)
  local ok2, p2 = pcall(vim.uri_to_fname, b)
  return ok1 and ok2 and compat.normalize(p1) == compat.normalize(p2)
end

--- The status row of `root` in a mnemon/status result (the only row when there is one).
local function workspace_row(result, root)
  local rows = (type(result) == "table" and type(result.workspaces) == "table") and result.workspaces or {}
  local uri = client.root_uri(root)
  for _, row in ipairs(rows) do
    if same_uri(row.uri, uri) then
      return row
    end
  end
  if #rows == 1 then
    return rows[1]
  end
  return nil
end

local function workspace_label(uri)
  if not present(uri) then
    return "workspace"
  end
  local ok, path = pcall(vim.uri_to_fname, uri)
  return vim.fn.fnamemodify(ok and path or tostring(uri), ":t")
end

local function usage_text(usage)
  if type(usage) ~= "table" then
    return "?"
  end
  return string.format("%s/%s bytes", tostring(usage.used), tostring(usage.limit))
end

--- "MEMORY.md now holds 2 entries (57/10240 bytes)"
local function receipt_text(file, receipt)
  local n = receipt.entryCount
  local noun = n == 1 and "entry" or "entries"
  return string.format("%s now holds %s %s (%s)", file, tostring(n), noun, usage_text(receipt.usage))
end

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
      if err then
        local msg = "mnemon: not remembered: " .. client.format_error(err)
        notify(msg, levels.ERROR)
        return done(callback, err)
      end
      if type(result) ~= "table" then
        local msg = "mnemon: not remembered: unexpected reply from mnemon-ls"
        notify(msg, levels.ERROR)
        return done(callback, { message = msg })
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

-- ------------------------------------------------------------------ wake

local scratch_buffers = {}

--- Show `text` in the read-only markdown scratch buffer `mnemon://<kind><root>` (one per kind and root).
local function show_scratch(root, text, kind)
  kind = kind or "wake"
  local key = kind .. "\0" .. root
  local bufnr = scratch_buffers[key]
  if not bufnr or not vim.api.nvim_buf_is_valid(bufnr) then
    bufnr = vim.api.nvim_create_buf(false, true)
    scratch_buffers[key] = bufnr
    pcall(vim.api.nvim_buf_set_name, bufnr, "mnemon://" .. kind .. root)
    compat.set_option(bufnr, "buftype", "nofile")
    compat.set_option(bufnr, "bufhidden", "wipe")
    compat.set_option(bufnr, "swapfile", false)
    vim.b[bufnr].mnemon_root = root
  end
  if vim.bo[bufnr].filetype ~= "markdown" then
    compat.set_option(bufnr, "filetype", "markdown")
  end
  return util.show_lines(bufnr, vim.split(text, "\n", { plain = true }))
end

--- Show the wake snapshot of the buffer's workspace (mnemon/wake) in a scratch buffer.
--- opts: bufnr, branch (render for another branch). callback(err, result, wake_bufnr).
function M.wake(opts, callback)
  opts = opts or {}
  local bufnr = (opts.bufnr == nil or opts.bufnr == 0) and vim.api.nvim_get_current_buf() or opts.bufnr
  local c, root = client_or_fail(bufnr, callback)
  if not c then
    return
  end
  local params = { workspace = client.root_uri(root) }
  if opts.branch then
    params.branch = opts.branch
  end
  client.request(c, "mnemon/wake", params, function(err, result)
    if err then
      notify("mnemon: wake failed: " .. client.format_error(err), levels.ERROR)
      return done(callback, err)
    end
    if type(result) ~= "table" or type(result.text) ~= "string" then
      notify("mnemon: wake failed: unexpected reply from mnemon-ls", levels.ERROR)
      return done(callback, { message = "unexpected reply" })
    end
    local ok, shown = pcall(show_scratch, root, result.text)
    if not ok then
      notify("mnemon: cannot show the wake snapshot: " .. tostring(shown), levels.ERROR)
      return done(callback, { message = tostring(shown) })
    end
    done(callback, nil, result, shown)
  end, { bufnr = bufnr })
end

-- ------------------------------------------------------------------ recall

local function num(value)
  return type(value) == "number" and value or 0
end

--- Lines of the recall buffer for a mnemon/recall result (see :help :MnemonRecall).
function M.format_recall(result)
  local results = type(result.results) == "table" and result.results or {}
  local hidden = type(result.hidden) == "table" and result.hidden or {}
  local other, detached = num(hidden.otherBranch), num(hidden.detachedHead)
  local header = string.format('# mnemon recall: "%s" — %d result%s', tostring(result.query), #results,
    #results == 1 and "" or "s")
  if other + detached > 0 then
    header = header .. string.format(", %d hidden", other + detached)
  end
  local lines = { header }
  for i, item in ipairs(results) do
    local score = type(item.score) == "number" and string.format("%.2f", item.score) or "n/a"
    local meta = {
      "score " .. score,
      "tier " .. (present(item.tier) and tostring(item.tier) or "unknown"),
      "category " .. (present(item.category) and tostring(item.category) or "-"),
      "created " .. (present(item.createdAt) and tostring(item.createdAt) or "-"),
    }
    if present(item.branchLabel) then
      table.insert(meta, "branch " .. tostring(item.branchLabel))
    end
    table.insert(lines, "")
    table.insert(lines, string.format("## %d. %s", i, present(item.spaceName) and tostring(item.spaceName)
      or tostring(item.spaceId)))
    table.insert(lines, string.format("_%s · id %s · %s_", tostring(item.spaceId), tostring(item.id),
      table.concat(meta, " · ")))
    table.insert(lines, "")
    for _, line in ipairs(vim.split(tostring(present(item.content) and item.content or ""), "\n", { plain = true })) do
      table.insert(lines, line)
    end
  end
  local tail = {}
  if other > 0 then
    table.insert(tail, string.format("Hidden: %d item%s scoped to another git branch.", other, other == 1 and "" or "s"))
  end
  if detached > 0 then
    table.insert(tail, string.format("Hidden: %d branch-scoped item%s (no current git branch).", detached,
      detached == 1 and "" or "s"))
  end
  if type(result.truncated) == "number" and result.truncated > 0 then
    table.insert(tail, string.format("Truncated: %d more result(s) not shown.", result.truncated))
  end
  for _, notice in ipairs(type(result.notices) == "table" and result.notices or {}) do
    table.insert(tail, "Notice: " .. tostring(notice))
  end
  if #tail > 0 then
    table.insert(lines, "")
    table.insert(lines, "---")
    for _, line in ipairs(tail) do
      table.insert(lines, line)
    end
  end
  return lines
end

--- Recall `query` from the workspace's active Memory Spaces (mnemon/recall, with the server's branch
--- scope) into the read-only markdown scratch buffer `mnemon://recall<root>`. No result: one INFO
--- notification with the server's hint (and hidden counts), no buffer. opts: bufnr, limit, mode,
--- spaces (list of ids). callback(err, result, recall_bufnr) (recall_bufnr nil when nothing matched).
function M.recall(query, opts, callback)
  opts = opts or {}
  local c, root
  c, root, query = query_prelude("MnemonRecall", query, opts, callback)
  if not c then
    return
  end
  local params = { workspace = client.root_uri(root), query = query }
  if opts.limit then
    params.limit = opts.limit
  end
  if opts.mode then
    params.mode = opts.mode
  end
  if opts.spaces then
    params.spaces = opts.spaces
  end
  client.request(c, "mnemon/recall", params, function(err, result)
    if err then
      notify("mnemon: recall failed: " .. client.format_error(err), levels.ERROR)
      return done(callback, err)
    end
    if type(result) ~= "table" then
      notify("mnemon: recall failed: unexpected reply from mnemon-ls", levels.ERROR)
      return done(callback, { message = "unexpected reply" })
    end
    local results = type(result.results) == "table" and result.results or {}
    if #results == 0 then
      local hidden = type(result.hidden) == "table" and result.hidden or {}
      local n = num(hidden.otherBranch) + num(hidden.detachedHead)
      local msg = string.format('mnemon: nothing recalled for "%s": %s', query,
        present(result.hint) and tostring(result.hint) or "nothing matched")
      if n > 0 then
        msg = msg .. string.format(" (%d branch-scoped item%s hidden)", n, n == 1 and "" or "s")
      end
      notify(msg, levels.INFO)
      for _, notice in ipairs(type(result.notices) == "table" and result.notices or {}) do
        notify("mnemon: " .. tostring(notice), levels.WARN)
      end
      return done(callback, nil, result, nil)
    end
    local ok, shown = pcall(show_scratch, root, table.concat(M.format_recall(result), "\n"), "recall")
    if not ok then
      notify("mnemon: cannot show the recall results: " .. tostring(shown), levels.ERROR)
      return done(callback, { message = tostring(shown) })
    end
    done(callback, nil, result, shown)
  end, { bufnr = bufnr })
end

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

-- ------------------------------------------------------------------ status

--- Lines describing a mnemon/status result; second value: protocol warning or nil.
function M.format_status(result)
  local lines = {}
  table.insert(lines, string.format("mnemon-ls %s, protocol %s", tostring(result.version), tostring(result.protocolVersion)))
  local warning
  if result.protocolVersion ~= M.PROTOCOL_VERSION then
    warning = string.format("mnemon: mnemon-ls speaks protocol %s but this plugin expects %d; update the one that is older",
      tostring(result.protocolVersion), M.PROTOCOL_VERSION)
  end
  local rows = type(result.workspaces) == "table" and result.workspaces or {}
  if #rows == 0 then
    table.insert(lines, "  no workspace folder")
  end
  for _, row in ipairs(rows) do
    local branch = present(row.branch) and tostring(row.branch)
      or ("none (" .. (present(row.branchReason) and tostring(row.branchReason) or (row.detached and "detached HEAD" or "no branch")) .. ")")
    local entries = type(row.entries) == "table" and row.entries or {}
    local usage = type(row.usage) == "table" and row.usage or {}
    local name = present(row.name) and row.name ~= "" and row.name or workspace_label(row.uri)
    table.insert(lines, string.format("  %s: branch %s; entries user %s, memory %s; usage user %s, memory %s; storage %s (%s)",
      tostring(name), branch, tostring(entries.user), tostring(entries.memory), usage_text(usage.user),
      usage_text(usage.memory), tostring(row.scope), tostring(row.root)))
    for _, problem in ipairs(type(row.problems) == "table" and row.problems or {}) do
      table.insert(lines, "    problem: " .. tostring(problem))
    end
  end
  return lines, warning
end

--- Show mnemon/status of the buffer's client (or of every running client when the buffer has none).
function M.status(opts, callback)
  opts = opts or {}
  local bufnr = (opts.bufnr == nil or opts.bufnr == 0) and vim.api.nvim_get_current_buf() or opts.bufnr
  local clients = {}
  local c = client.for_buf(bufnr)
  if c then
    clients = { c }
  else
    clients = client.all()
  end
  if #clients == 0 then
    local msg = "mnemon: no mnemon-ls client is running (open a file inside a git repository or a .mnemon root)"
    notify(msg, levels.WARN)
    return done(callback, { message = msg })
  end
  for _, each in ipairs(clients) do
    client.request(each, "mnemon/status", vim.empty_dict(), function(err, result)
      if err then
        notify("mnemon: status failed: " .. client.format_error(err), levels.ERROR)
        return done(callback, err)
      end
      if type(result) ~= "table" then
        notify("mnemon: status failed: unexpected reply from mnemon-ls", levels.ERROR)
        return done(callback, { message = "unexpected reply" })
      end
      local lines, warning = M.format_status(result)
      notify(table.concat(lines, "\n"), levels.INFO)
      if warning then
        notify(warning, levels.WARN)
      end
      done(callback, nil, result)
    end, { bufnr = bufnr })
  end
end

-- ------------------------------------------------------------------ forget

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
    if err then
      local msg = "mnemon: not forgotten: " .. client.format_error(err)
      local data = type(err) == "table" and err.data
      if type(data) == "table" and present(data.matches) then
        msg = msg .. string.format(" (%s entries match; use a longer text)", tostring(data.matches))
      end
      notify(msg, levels.ERROR)
      return done(callback, err)
    end
    if type(result) ~= "table" then
      notify("mnemon: not forgotten: unexpected reply from mnemon-ls", levels.ERROR)
      return done(callback, { message = "unexpected reply" })
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
