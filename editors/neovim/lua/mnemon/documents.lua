-- mnemon.nvim: Documents from the editor (split out of init.lua; require("mnemon") re-exports these):
--
--   M.doc_create    create a managed document from the buffer's saved file, or offer the update when the
--                   file already has one (workspace/executeCommand mnemon.server.createDocumentFromFile)
--   M.doc_search    search the workspace's managed documents into the quickfix list (mnemon/documents/search)
--   M.search_items  the quickfix items of search hits

local compat = require("mnemon.compat")
local client = require("mnemon.client")
local util = require("mnemon.util")

local M = {}

local levels = vim.log.levels
local notify = client.notify
local present = client.present
local done = util.done
local client_or_fail = util.client_or_fail
local query_prelude = util.query_prelude


--- Create a managed document from the buffer's file (workspace/executeCommand
--- mnemon.server.createDocumentFromFile) and open it in a split. The buffer must be a saved file (no
--- unsaved changes) inside a workspace root. opts: bufnr, title (default: the server's choice, the
--- first Markdown heading or the file name). callback(err, result) with the server's result.
function M.doc_create(opts, callback)
  opts = opts or {}
  local bufnr = (opts.bufnr == nil or opts.bufnr == 0) and vim.api.nvim_get_current_buf() or opts.bufnr
  local function fail(msg, data)
    msg = "mnemon: no document created: " .. msg
    notify(msg, levels.ERROR)
    done(callback, { message = msg, data = data })
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if vim.bo[bufnr].buftype ~= "" or name == "" or name:match("^%a[%w+.-]*://") then
    return fail("this buffer is not a file; open a saved file of the workspace")
  end
  local path = compat.normalize(name)
  local shown_name = vim.fn.fnamemodify(path, ":~:.")
  if vim.bo[bufnr].modified then
    return fail(shown_name .. " has unsaved changes; save it (:write) and run :MnemonDocCreate again")
  end
  local stat = compat.uv.fs_stat(path)
  if not stat then
    return fail(shown_name .. " is not saved yet; :write it first")
  end
  if stat.type ~= "file" then
    return fail(shown_name .. " is not a regular file")
  end
  if not client.root_for_path(path) then
    return fail(path .. " is not inside a workspace (no git repository or .mnemon root above it)")
  end
  local c = client_or_fail(bufnr, callback)
  if not c then
    return
  end
  local argument = { uri = vim.uri_from_fname(path) }
  if type(opts.title) == "string" and vim.trim(opts.title) ~= "" then
    argument.title = vim.trim(opts.title)
  end

  local function created(result)
    local document = type(result.document) == "table" and result.document or {}
    notify(string.format("mnemon: document created: %s (%s)", tostring(document.title),
      tostring(document.relativePath)), levels.INFO)
    for _, notice in ipairs(type(result.notices) == "table" and result.notices or {}) do
      notify("mnemon: " .. tostring(notice), levels.WARN)
    end
    local target = present(result.path) and result.path or document.path
    -- With window/showDocument support (Neovim 0.8+) the server already asked the client to show the
    -- document and the handler opened it (result.shown); show_file also reuses a window showing it.
    if result.shown ~= true and present(target) then
      local ok, problem = pcall(client.show_file, tostring(target))
      if not ok then
        notify("mnemon: cannot open " .. tostring(target) .. ": " .. tostring(problem), levels.ERROR)
      end
    end
    done(callback, nil, result)
  end

  local function create()
    client.execute_create_document(c, argument, function(err, result)
      if err then
        return fail(client.format_error(err), err)
      end
      if type(result) ~= "table" then
        return fail("unexpected reply from mnemon-ls")
      end
      if result.success == false then
        -- e.g. a file that is not UTF-8, or a managed document itself ([invalid-input])
        local e = type(result.error) == "table" and result.error or {}
        local msg = tostring(present(e.message) and e.message or "unknown error")
        if present(e.code) then
          msg = msg .. " [" .. tostring(e.code) .. "]"
        end
        return fail(msg, e)
      end
      created(result)
    end, { bufnr = bufnr })
  end

  if opts.new then
    return create()
  end
  -- A file that already has a document (its sourcePaths name the file) is offered the update instead.
  local manage = require("mnemon.manage")
  manage.list_documents({ bufnr = bufnr }, function(err, docs, root)
    local existing = (not err and root) and manage.documents_of_file(docs, root, path) or {}
    if #existing == 0 then
      return create()
    end
    local choices = {}
    for _, doc in ipairs(existing) do
      table.insert(choices, { label = "Update document from file: " .. tostring(doc.title), doc = doc })
    end
    table.insert(choices, { label = "Create another document from this file" })
    vim.ui.select(choices, { prompt = "mnemon: " .. shown_name .. " already has a document",
      format_item = function(choice) return choice.label end }, function(choice)
      if not choice then
        return done(callback, nil, nil)
      end
      if not choice.doc then
        return create()
      end
      manage.doc_update_from_file(choice.doc, path, { bufnr = bufnr }, callback)
    end)
  end)
end

--- Line of the managed file `path` where a hit for `query` is: the first body line (after the front
--- matter) holding a word of the query, else the first non-blank body line.
local function hit_line(path, query)
  local ok, lines = pcall(vim.fn.readfile, path, "", 20000)
  if not ok or type(lines) ~= "table" or #lines == 0 then
    return 1
  end
  local first = 1
  if lines[1] == "---" then
    for i = 2, #lines do
      if lines[i] == "---" then
        first = i + 1
        break
      end
    end
  end
  local words = {}
  for word in query:lower():gmatch('[^%s"]+') do
    table.insert(words, word)
  end
  for i = first, #lines do
    local line = lines[i]:lower()
    for _, word in ipairs(words) do
      if line:find(word, 1, true) then
        return i
      end
    end
  end
  for i = first, #lines do
    if lines[i]:match("%S") then
      return i
    end
  end
  return math.min(first, #lines)
end

local function one_line(text)
  return util.one_line(text)
end

--- Quickfix items of search hits (hits without a path are left out).
function M.search_items(hits, query)
  local items = {}
  for _, hit in ipairs(hits) do
    if present(hit.path) then
      local text = one_line(hit.title)
      local excerpt = one_line(present(hit.excerpt) and hit.excerpt or "")
      if excerpt ~= "" then
        text = text .. " — " .. excerpt
      end
      if hit.status == "archived" then
        text = "[archived] " .. text
      end
      table.insert(items, { filename = tostring(hit.path), lnum = hit_line(tostring(hit.path), query), text = text })
    end
  end
  return items
end

--- Search the workspace's managed documents (mnemon/documents/search) into a new quickfix list, and
--- open the quickfix window when something matched. opts: bufnr, limit (1..50, default 20),
--- include_archived, open (default true). callback(err, result, items).
function M.doc_search(query, opts, callback)
  opts = opts or {}
  local c, root, bufnr
  c, root, query, bufnr = query_prelude("MnemonDocSearch", query, opts, callback)
  if not c then
    return
  end
  local params = { workspace = client.root_uri(root), query = query, limit = opts.limit or 20 }
  if opts.include_archived then
    params.includeArchived = true
  end

  local function show(result, hits)
    local items = M.search_items(hits, query)
    local missing = #hits - #items
    local title = string.format('mnemon: documents matching "%s"', query)
    vim.fn.setqflist({}, " ", { title = title, items = items })
    for _, notice in ipairs(type(result.notices) == "table" and result.notices or {}) do
      notify("mnemon: " .. tostring(notice), levels.WARN)
    end
    if missing > 0 then
      notify(string.format("mnemon: %d hit(s) left out: mnemon-ls gave no path for them", missing), levels.WARN)
    end
    if #items == 0 then
      notify(string.format('mnemon: no document matches "%s"', query), levels.INFO)
    else
      local msg = string.format('mnemon: %d document%s match%s "%s"', #items, #items == 1 and "" or "s",
        #items == 1 and "es" or "", query)
      if type(result.matches) == "number" and result.matches > #items then
        msg = msg .. string.format(" (showing %d of %d)", #items, result.matches)
      end
      notify(msg, levels.INFO)
      if opts.open ~= false then
        vim.cmd("copen")
      end
    end
    done(callback, nil, result, items)
  end

  client.request(c, "mnemon/documents/search", params, function(err, result)
    if not util.reply_ok("document search", err, result, callback) then
      return
    end
    show(result, type(result.results) == "table" and result.results or {})
  end, { bufnr = bufnr })
end

return M
