-- mnemon.nvim: manage memory from Neovim with pickers (vim.ui.select, which Telescope, fzf-lua and
-- dressing.nvim replace) and prompts (vim.ui.input).
--
--   Runtime memory  M.entries: list USER.md and MEMORY.md entries; edit (replace), remove, re-scope to
--                   branches, change importance (mnemon/runtime/snapshot, mnemon/runtime/mutate).
--   Memory Spaces   M.spaces, M.space_create, M.space_activate, M.space_deactivate (mnemon/spaces/*).
--   Documents       M.documents, M.doc_archive, M.doc_restore, M.doc_update_from_file (mnemon/documents/*,
--                   mnemon.server.updateDocumentFromFile).
--   Recall          M.recall_pick: pick a result and preview it in full (mnemon/recall).
--
-- Every function takes opts.bufnr (default: the current buffer) and calls callback(err, result) once.
-- The server checks every rule (a `§` inside an entry, 8 KiB, capacity, space names); its error is
-- shown with the field and rule, and nothing changes. A Runtime change is fenced: when memories.json
-- changed since the list was read (another editor, the CLI, a hand edit), nothing is written, the
-- list is read again and the message says so.

local client = require("mnemon.client")
local util = require("mnemon.util")

local M = {}

local levels = vim.log.levels
local notify = client.notify
local present = client.present
local done = util.done
local one_line = util.one_line

local FILES = { user = "USER.md", memory = "MEMORY.md" }

--- Listeners run after any change this module made (the statusline refreshes from them).
M.on_change = {}

local function changed(root)
  pcall(function() require("mnemon.statusline").invalidate(root) end)
  for _, fn in ipairs(M.on_change) do
    pcall(fn, root)
  end
end

local function request(c, bufnr, method, params, callback)
  client.request(c, method, params, callback, { bufnr = bufnr })
end

local function with_client(opts, callback)
  local bufnr = util.buf(opts and opts.bufnr)
  local c, root = util.client_or_fail(bufnr, callback)
  return c, root, bufnr
end

-- ------------------------------------------------------------------ Runtime memory entries

--- One picker line: "[MEMORY.md] content (importance; branches main,dev)".
function M.format_entry(entry)
  local meta = {}
  if present(entry.importance) and entry.importance ~= "normal" then
    table.insert(meta, tostring(entry.importance))
  end
  if type(entry.branches) == "table" and #entry.branches > 0 then
    table.insert(meta, "branches " .. table.concat(entry.branches, ","))
  end
  local suffix = #meta > 0 and (" (" .. table.concat(meta, "; ") .. ")") or ""
  return string.format("[%s] %s%s", FILES[entry.target] or tostring(entry.target), one_line(entry.content, 100), suffix)
end

--- Read every entry (`callback(err, entries, revision)`; each entry as stored plus `target`), optionally
--- of one target.
function M.read_entries(opts, callback)
  opts = opts or {}
  local c, root, bufnr = with_client(opts, callback)
  if not c then
    return
  end
  request(c, bufnr, "mnemon/runtime/snapshot", { workspace = client.root_uri(root) }, function(err, result)
    if err then
      util.fail("entries not listed: ", err)
      return done(callback, err)
    end
    local out = {}
    for _, entry in ipairs(type(result) == "table" and type(result.entries) == "table" and result.entries or {}) do
      if not opts.target or entry.target == opts.target then
        table.insert(out, entry)
      end
    end
    done(callback, nil, out, result.revision)
  end)
end

--- Send one mutation of `entry` (the entry as read at `revision`): re-read first and refuse, refresh and
--- say so when the store changed meanwhile. `params` are mutate params without workspace/target/oldText.
local function mutate_entry(entry, revision, params, verb, opts, callback)
  local c, root, bufnr = with_client(opts, callback)
  if not c then
    return
  end
  local file = FILES[entry.target] or "MEMORY.md"
  request(c, bufnr, "mnemon/runtime/snapshot", { workspace = client.root_uri(root) }, function(err, now)
    if err then
      util.fail("not " .. verb .. ": ", err)
      return done(callback, err)
    end
    if revision and type(now) == "table" and now.revision ~= revision then
      local msg = string.format("mnemon: not %s: %s changed meanwhile (another editor, the command line or a hand "
        .. "edit); nothing was changed and the list was read again", verb, file)
      notify(msg, levels.WARN)
      done(callback, { code = "revision-conflict", message = msg, data = { code = "revision-conflict" } })
      if opts.refresh ~= false then
        M.entries({ bufnr = bufnr, target = opts.target })
      end
      return
    end
    local body = vim.tbl_extend("force", params, { workspace = client.root_uri(root), target = entry.target,
      oldText = entry.content })
    request(c, bufnr, "mnemon/runtime/mutate", body, function(err2, receipt)
      if err2 then
        local msg = util.fail("not " .. verb .. ": ", err2)
        return done(callback, { code = err2.code, message = msg, data = err2.data })
      end
      notify(string.format("mnemon: %s %s now holds %s %s (%s/%s bytes)", tostring(receipt.message), file,
        tostring(receipt.entryCount), receipt.entryCount == 1 and "entry" or "entries",
        tostring(receipt.usage and receipt.usage.used), tostring(receipt.usage and receipt.usage.limit)), levels.INFO)
      changed(root)
      done(callback, nil, receipt)
    end)
  end)
end

--- Replace the content of `entry` (read at `revision`) with `content` (importance and branches kept).
function M.edit_entry(entry, revision, content, opts, callback)
  mutate_entry(entry, revision, { action = "replace", content = content }, "edited", opts or {}, callback)
end

--- Remove `entry` (read at `revision`).
function M.remove_entry(entry, revision, opts, callback)
  mutate_entry(entry, revision, { action = "remove" }, "removed", opts or {}, callback)
end

--- Keep `entry` to `branches` (a list; {} shows it on every branch). MEMORY.md entries only.
function M.scope_entry(entry, revision, branches, opts, callback)
  -- an empty Lua table is sent as [] (no branch scope)
  mutate_entry(entry, revision, { action = "replace", content = entry.content, branches = branches or {} },
    "re-scoped", opts or {}, callback)
end

--- Set the importance of `entry` (critical, normal or low).
function M.set_importance(entry, revision, importance, opts, callback)
  mutate_entry(entry, revision, { action = "replace", content = entry.content, importance = importance },
    "changed", opts or {}, callback)
end

--- Parse "main, release/1" into a list of branch names ("" or "-": none).
function M.parse_branches(text)
  local out = {}
  text = vim.trim(text or "")
  if text == "-" then
    return out
  end
  for name in text:gmatch("[^,%s]+") do
    table.insert(out, name)
  end
  return out
end

M.entry_actions = { "Edit", "Remove", "Branches", "Importance" }

--- Pick an entry, then an action (Edit, Remove, Branches, Importance), and carry it out.
--- opts: bufnr, target ("user"|"memory"|nil: both). callback(err, receipt) (nil, nil when cancelled).
function M.entries(opts, callback)
  opts = opts or {}
  M.read_entries(opts, function(err, entries, revision)
    if err then
      return done(callback, err)
    end
    util.pick(entries, { noun = { "entry", "entries" }, format_item = M.format_entry, kind = "mnemon.entry",
      empty = "mnemon: no entries yet (remember a selection with :MnemonRemember)" }, function(entry)
      M.entry_menu(entry, revision, opts, callback)
    end, callback)
  end)
end

--- The actions of one entry (read at `revision`): Edit, Remove, Branches (MEMORY.md), Importance.
function M.entry_menu(entry, revision, opts, callback)
  local actions = entry.target == "memory" and M.entry_actions or { "Edit", "Remove", "Importance" }
  util.menu("mnemon: " .. one_line(entry.content, 60), actions, {
    Edit = function()
      util.ask("mnemon: new text: ", entry.content, function(text)
        M.edit_entry(entry, revision, text, opts, callback)
      end, callback, { unchanged = true })
    end,
    Remove = function()
      M.remove_entry(entry, revision, opts, callback)
    end,
    Branches = function()
      local current = type(entry.branches) == "table" and table.concat(entry.branches, ", ") or ""
      util.ask("mnemon: branches (comma-separated; empty: every branch): ", current, function(text)
        M.scope_entry(entry, revision, M.parse_branches(text), opts, callback)
      end, callback)
    end,
    Importance = function()
      local function set(importance)
        return function()
          M.set_importance(entry, revision, importance, opts, callback)
        end
      end
      util.menu("mnemon: importance", { "critical", "normal", "low" },
        { critical = set("critical"), normal = set("normal"), low = set("low") }, callback)
    end,
  }, callback)
end

-- ------------------------------------------------------------------ Memory Spaces

--- "* Project (default, 3 items): description" ("*": active for reading).
function M.format_space(space)
  return string.format("%s %s (%s): %s", space.active and "*" or " ", tostring(space.name), tostring(space.id),
    one_line(space.description, 80))
end

--- `callback(err, spaces, notes)`: every Memory Space of the workspace (mnemon/spaces/list) and what the space
--- registry says of itself (`notes`: a rebuilt file, a catalog of a newer version; {} when nothing).
function M.list_spaces(opts, callback)
  opts = opts or {}
  local c, root, bufnr = with_client(opts, callback)
  if not c then
    return
  end
  request(c, bufnr, "mnemon/spaces/list", { workspace = client.root_uri(root) }, function(err, result)
    if err then
      util.fail("spaces not listed: ", err)
      return done(callback, err)
    end
    local notes = type(result) == "table" and type(result.notes) == "table" and result.notes or {}
    done(callback, nil, type(result) == "table" and type(result.spaces) == "table" and result.spaces or {}, notes)
  end)
end

local function space_call(method, params, verb, opts, callback)
  local c, root, bufnr = with_client(opts or {}, callback)
  if not c then
    return
  end
  params.workspace = client.root_uri(root)
  request(c, bufnr, method, params, function(err, result)
    if err then
      local msg = util.fail("space not " .. verb .. ": ", err)
      return done(callback, { code = err.code, message = msg, data = err.data })
    end
    local space = type(result) == "table" and (result.space or result) or {}
    notify(string.format("mnemon: space %s %s (%s)%s", tostring(space.name), verb, tostring(space.id),
      space.active and ", active for reading" or ""), levels.INFO)
    changed(root)
    done(callback, nil, result)
  end)
end

--- Create a Memory Space (the server checks the name: 1..100 characters, unique). opts.active activates it.
function M.space_create(name, description, opts, callback)
  opts = opts or {}
  space_call("mnemon/spaces/create", { name = name, description = description or "", active = opts.active == true },
    "created", opts, callback)
end

function M.space_activate(id, opts, callback)
  space_call("mnemon/spaces/activate", { spaceId = id }, "activated", opts, callback)
end

function M.space_deactivate(id, opts, callback)
  space_call("mnemon/spaces/deactivate", { spaceId = id }, "deactivated", opts, callback)
end

--- Pick a space, then Activate or Deactivate it (or Recall from it: a query prompt, then the picker).
function M.spaces(opts, callback)
  opts = opts or {}
  M.list_spaces(opts, function(err, spaces, notes)
    if err then
      return done(callback, err)
    end
    -- An empty list beside the registry's notes (a catalog of a newer version: none can be created) says them
    -- instead of inviting :MnemonSpaceCreate.
    local empty = "mnemon: no Memory Space yet (:MnemonSpaceCreate {name})"
    if notes and #notes > 0 then
      empty = "mnemon: no Memory Space can be shown here: " .. table.concat(notes, "; ")
    end
    util.pick(spaces, { noun = { "Memory Space", "Memory Spaces" }, format_item = M.format_space, kind = "mnemon.space",
      empty = empty }, function(space)
      M.space_menu(space, opts, callback)
    end, callback)
  end)
end

--- The actions of one Memory Space: Activate or Deactivate, Recall from it.
function M.space_menu(space, opts, callback)
  local actions = { space.active and "Deactivate" or "Activate" }
  -- A space whose provider cannot search offers no recall (seed 000: no pretending).
  if not (type(space.capabilities) == "table" and space.capabilities.search == false) then
    table.insert(actions, "Recall from it")
  end
  util.menu("mnemon: " .. tostring(space.name), actions, {
    Activate = function()
      M.space_activate(space.id, opts, callback)
    end,
    Deactivate = function()
      M.space_deactivate(space.id, opts, callback)
    end,
    ["Recall from it"] = function()
      util.ask("mnemon: recall from " .. tostring(space.name) .. ": ", nil, function(query)
        M.recall_pick(query, vim.tbl_extend("force", opts, { spaces = { space.id } }), callback)
      end, callback, { nonblank = true })
    end,
  }, callback)
end

-- ------------------------------------------------------------------ Documents

--- "[archived] Title (documents/archived/...) — description".
function M.format_document(doc)
  local text = string.format("%s%s", doc.status == "archived" and "[archived] " or "", one_line(doc.title, 80))
  if present(doc.description) and doc.description ~= "" then
    text = text .. " — " .. one_line(doc.description, 60)
  end
  return text
end

--- `callback(err, documents)` (mnemon/documents/list; active only unless opts.include_archived).
function M.list_documents(opts, callback)
  opts = opts or {}
  local c, root, bufnr = with_client(opts, callback)
  if not c then
    return
  end
  local params = { workspace = client.root_uri(root) }
  if not opts.include_archived then
    params.status = "active"
  end
  request(c, bufnr, "mnemon/documents/list", params, function(err, result)
    if err then
      util.fail("documents not listed: ", err)
      return done(callback, err)
    end
    done(callback, nil, type(result) == "table" and type(result.documents) == "table" and result.documents or {}, root)
  end)
end

local function doc_call(method, params, verb, opts, callback)
  local c, root, bufnr = with_client(opts or {}, callback)
  if not c then
    return
  end
  params.workspace = client.root_uri(root)
  request(c, bufnr, method, params, function(err, result)
    if err then
      local msg = util.fail("document not " .. verb .. ": ", err)
      if util.error_code(err) == "revision-conflict" then
        msg = msg .. " (it changed meanwhile; list it again)"
      end
      return done(callback, { code = err.code, message = msg, data = err.data })
    end
    local doc = type(result) == "table" and type(result.document) == "table" and result.document or {}
    notify(string.format("mnemon: document %s: %s (revision %s)", verb, tostring(doc.title), tostring(doc.revision)),
      levels.INFO)
    changed(root)
    done(callback, nil, result)
  end)
end

--- Archive the active document `doc` ({id, revision}); a stale revision is refused (revision-conflict).
function M.doc_archive(doc, opts, callback)
  doc_call("mnemon/documents/archive", { id = doc.id, documentRevision = doc.revision }, "archived", opts, callback)
end

--- Restore the archived document `doc`.
function M.doc_restore(doc, opts, callback)
  doc_call("mnemon/documents/restore", { id = doc.id, documentRevision = doc.revision }, "restored", opts, callback)
end

--- Update the document `doc` from the workspace file `path` (its body becomes the file's text).
function M.doc_update_from_file(doc, path, opts, callback)
  opts = opts or {}
  local c, _, bufnr = with_client(opts, callback)
  if not c then
    return
  end
  client.execute_command(c, client.CMD_UPDATE_DOCUMENT, { uri = vim.uri_from_fname(path), id = doc.id,
    documentRevision = doc.revision }, { "^mnemon: document updated", "^mnemon: document unchanged",
    "^mnemon: document not updated" },
    function(err, result)
      if err or type(result) ~= "table" or result.success == false then
        local e = err or (type(result) == "table" and result.error) or {}
        local msg = "mnemon: document not updated: " .. client.format_error(e.message and e or { message = tostring(e) })
        if type(e) == "table" and present(e.code) and type(e.code) == "string" then
          msg = msg .. " [" .. e.code .. "]"
        end
        notify(msg, levels.ERROR)
        return done(callback, { message = msg, data = e })
      end
      local said = result.action == "unchanged" and "mnemon: document unchanged: %s: no change; revision %s kept"
        or result.action == "adopted"
          and "mnemon: document adopted: %s (revision %s): the hand edit already was that text"
        or "mnemon: document updated: %s (revision %s)"
      notify(string.format(said, tostring(result.document.title), tostring(result.document.revision)), levels.INFO)
      done(callback, nil, result)
    end, { bufnr = bufnr })
end

--- Pick a document, then Open, Archive or Restore it. opts: bufnr, include_archived.
function M.documents(opts, callback)
  opts = opts or {}
  M.list_documents(opts, function(err, docs)
    if err then
      return done(callback, err)
    end
    util.pick(docs, { noun = { "document", "documents" }, format_item = M.format_document, kind = "mnemon.document",
      empty = "mnemon: no document yet (:MnemonDocCreate in a saved file)" }, function(doc)
      M.document_menu(doc, opts, callback)
    end, callback)
  end)
end

--- The actions of one document: Open, then Archive (active) or Restore (archived).
function M.document_menu(doc, opts, callback)
  local actions = { "Open", doc.status == "archived" and "Restore" or "Archive" }
  util.menu("mnemon: " .. one_line(doc.title, 60), actions, {
    Open = function()
      local ok, problem = pcall(client.show_file, tostring(doc.path))
      if not ok then
        notify("mnemon: cannot open " .. tostring(doc.path) .. ": " .. tostring(problem), levels.ERROR)
      end
      done(callback, nil, doc)
    end,
    Archive = function()
      M.doc_archive(doc, opts, callback)
    end,
    Restore = function()
      M.doc_restore(doc, opts, callback)
    end,
  }, callback)
end

--- Documents whose sourcePaths name `path` (relative to `root`), active only.
function M.documents_of_file(docs, root, path)
  local rel = path
  local prefix = root:sub(-1) == "/" and root or (root .. "/")
  if path:sub(1, #prefix) == prefix then
    rel = path:sub(#prefix + 1)
  end
  local out = {}
  for _, doc in ipairs(docs) do
    if doc.status == "active" and type(doc.sourcePaths) == "table" and vim.tbl_contains(doc.sourcePaths, rel) then
      table.insert(out, doc)
    end
  end
  return out
end

-- ------------------------------------------------------------------ recall with a preview

--- "Project · 0.98 high · content".
function M.format_recall_item(item)
  local score = type(item.score) == "number" and string.format("%.2f", item.score) or "n/a"
  local label = present(item.branchLabel) and (" [" .. tostring(item.branchLabel) .. "]") or ""
  return string.format("%s · %s %s · %s%s", tostring(present(item.spaceName) and item.spaceName or item.spaceId), score,
    tostring(present(item.tier) and item.tier or "?"), one_line(item.content, 90), label)
end

--- Lines of the preview of one recall result: metadata, then the full content.
function M.preview_lines(item)
  local lines = {
    "# " .. tostring(present(item.spaceName) and item.spaceName or item.spaceId),
    "",
    string.format("_space %s · id %s · score %s · tier %s · category %s · created %s%s_", tostring(item.spaceId),
      tostring(item.id), type(item.score) == "number" and string.format("%.2f", item.score) or "n/a",
      tostring(present(item.tier) and item.tier or "?"), tostring(present(item.category) and item.category or "-"),
      tostring(present(item.createdAt) and item.createdAt or "-"),
      present(item.branchLabel) and (" · branch " .. tostring(item.branchLabel)) or ""),
    "",
  }
  for _, line in ipairs(vim.split(tostring(present(item.content) and item.content or ""), "\n", { plain = true })) do
    table.insert(lines, line)
  end
  return lines
end

--- Show `item` in the read-only markdown scratch buffer `mnemon://recall-item` (one, reused).
function M.show_preview(item)
  local name = "mnemon://recall-item"
  local bufnr = vim.fn.bufnr(name)
  if bufnr == -1 then
    bufnr = vim.api.nvim_create_buf(false, true)
    pcall(vim.api.nvim_buf_set_name, bufnr, name)
    local compat = require("mnemon.compat")
    compat.set_option(bufnr, "buftype", "nofile")
    compat.set_option(bufnr, "bufhidden", "hide")
    compat.set_option(bufnr, "swapfile", false)
    compat.set_option(bufnr, "filetype", "markdown")
  end
  return util.show_lines(bufnr, M.preview_lines(item))
end

--- Recall `query` (opts.spaces limits the spaces) into a picker; the pick opens its full preview.
--- callback(err, item) (nil item when cancelled or nothing matched).
function M.recall_pick(query, opts, callback)
  opts = opts or {}
  if type(query) ~= "string" or vim.trim(query) == "" then
    local msg = "mnemon: recall needs a query"
    notify(msg, levels.ERROR)
    return done(callback, { message = msg })
  end
  local c, root, bufnr = with_client(opts, callback)
  if not c then
    return
  end
  local params = { workspace = client.root_uri(root), query = vim.trim(query) }
  if opts.spaces then
    params.spaces = opts.spaces
  end
  request(c, bufnr, "mnemon/recall", params, function(err, result)
    if err then
      util.fail("recall failed: ", err)
      return done(callback, err)
    end
    local items = type(result) == "table" and type(result.results) == "table" and result.results or {}
    if #items == 0 then
      notify(string.format('mnemon: nothing recalled for "%s": %s', params.query,
        present(result.hint) and tostring(result.hint) or "nothing matched"), levels.INFO)
      return done(callback, nil, nil)
    end
    vim.ui.select(items, { prompt = string.format('mnemon: recalled for "%s"', params.query),
      format_item = M.format_recall_item, kind = "mnemon.recall" }, function(item)
      if not item then
        return done(callback, nil, nil)
      end
      local ok, problem = pcall(M.show_preview, item)
      if not ok then
        notify("mnemon: cannot show the result: " .. tostring(problem), levels.ERROR)
      end
      done(callback, nil, item)
    end)
  end)
end

return M
