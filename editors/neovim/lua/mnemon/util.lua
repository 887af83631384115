-- Helpers every mnemon.nvim module shares: callbacks that never throw, the client of a buffer (or why
-- there is none), one-line text. One copy here instead of a prelude in each module.

local client = require("mnemon.client")
local compat = require("mnemon.compat")

local M = {}

local levels = vim.log.levels
local present = client.present

--- Run `callback(err, ...)` if given; a failing callback is reported, never raised.
function M.done(callback, err, ...)
  if callback then
    local ok, problem = pcall(callback, err, ...)
    if not ok then
      client.notify("mnemon: callback failed: " .. tostring(problem), levels.ERROR)
    end
  end
end

--- Whether a request's answer can be used: an error ("mnemon: <what> failed: <the error>") or an answer that is
--- not a table ("mnemon: <what> failed: unexpected reply from mnemon-ls") is notified at ERROR and ends
--- `callback` with the error ({ message = "unexpected reply" } for the second); false then, else true.
--- opts (optional table), for the commands that word it their own way:
---   failed: the words after "mnemon: " instead of "<what> failed" ("not remembered");
---   hint: function(err) returning a text added after the error, or nil ("(3 entries match; use a longer text)");
---   field: a key whose value must be a string too, else the answer is unexpected (wake's "text");
---   whole: true to end `callback` with the notified message itself for an unexpected answer
---          ({ message = "mnemon: not remembered: unexpected reply from mnemon-ls" }).
function M.reply_ok(what, err, result, callback, opts)
  opts = opts or {}
  local head = "mnemon: " .. (opts.failed or (what .. " failed")) .. ": "
  if err then
    local hint = opts.hint and opts.hint(err)
    client.notify(head .. client.format_error(err) .. (hint and (" " .. hint) or ""), levels.ERROR)
    M.done(callback, err)
    return false
  end
  if type(result) ~= "table" or (opts.field and type(result[opts.field]) ~= "string") then
    local msg = head .. "unexpected reply from mnemon-ls"
    client.notify(msg, levels.ERROR)
    M.done(callback, { message = opts.whole and msg or "unexpected reply" })
    return false
  end
  return true
end

--- The buffer number `bufnr` stands for (nil or 0: the current buffer).
function M.buf(bufnr)
  return (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
end

--- The client of `bufnr` and its root, or nil after notifying why there is none (and calling
--- `callback({message})`).
function M.client_or_fail(bufnr, callback)
  local c, root, reason = client.for_buf(bufnr)
  if not c then
    local msg = "mnemon: " .. (reason or "no mnemon-ls client for this buffer")
    client.notify(msg, levels.ERROR)
    M.done(callback, { message = msg })
    return nil
  end
  return c, root
end

--- The common start of a query command: a non-empty `query` and the client serving `opts.bufnr`
--- (default: the current buffer). Returns client, root, trimmed query, bufnr; or nil after telling the user.
function M.query_prelude(command, query, opts, callback)
  local bufnr = (opts.bufnr == nil or opts.bufnr == 0) and vim.api.nvim_get_current_buf() or opts.bufnr
  if type(query) ~= "string" or vim.trim(query) == "" then
    local msg = "mnemon: :" .. command .. " needs a query"
    client.notify(msg, levels.ERROR)
    M.done(callback, { message = msg })
    return nil
  end
  local c, root = M.client_or_fail(bufnr, callback)
  if not c then
    return nil
  end
  return c, root, vim.trim(query), bufnr
end

--- `text` on one line (whitespace runs become one space), cut to `limit` bytes with "..." when longer.
function M.one_line(text, limit)
  local s = vim.trim((tostring(text or "")):gsub("%s+", " "))
  if limit and #s > limit then
    s = s:sub(1, limit - 3) .. "..."
  end
  return s
end

--- Notify `prefix .. format_error(err)` at ERROR and return the message. A full USER.md (an error carrying
--- the compaction plan, `data.maintenance`) is not notified here: the server announces it with
--- mnemon/maintenanceRequired, which mnemon.maintenance shows with what to do (one message, not two).
function M.fail(prefix, err)
  local msg = "mnemon: " .. prefix .. client.format_error(err)
  if not (type(err) == "table" and type(err.data) == "table" and type(err.data.maintenance) == "table") then
    client.notify(msg, levels.ERROR)
  end
  return msg
end

--- The picker every list of mnemon.nvim opens (vim.ui.select, which Telescope, fzf-lua and dressing.nvim
--- replace). spec: `noun` ("entr" .. plural, or a table {one, many}) for the prompt "mnemon: 3 entries",
--- `format_item`, `kind`, `empty` (the message when `items` is empty). `on_pick(item)` runs with the picked
--- item; an empty list or a cancel calls `callback(nil, nil)` once.
function M.pick(items, spec, on_pick, callback)
  if #items == 0 then
    client.notify(spec.empty, levels.INFO)
    return M.done(callback, nil, nil)
  end
  local one, many = spec.noun[1], spec.noun[2]
  vim.ui.select(items, { prompt = string.format("mnemon: %d %s", #items, #items == 1 and one or many),
    format_item = spec.format_item, kind = spec.kind }, function(item)
    if not item then
      return M.done(callback, nil, nil)
    end
    on_pick(item)
  end)
end

--- The action menu of one item: pick one of `actions` (a list of labels) under `prompt`, then run
--- `handlers[label]()`; a cancel (or a label without a handler) calls `callback(nil, nil)`.
function M.menu(prompt, actions, handlers, callback)
  vim.ui.select(actions, { prompt = prompt }, function(action)
    local handler = action and handlers[action]
    if not handler then
      return M.done(callback, nil, nil)
    end
    handler()
  end)
end

--- Ask for a line of text (vim.ui.input with `prompt` and `default`); `on_text(text)` runs unless the
--- prompt was cancelled (then `callback(nil, nil)`). `opts.unchanged`: also cancel when the text equals
--- the default; `opts.nonblank`: also cancel on an empty or blank answer.
function M.ask(prompt, default, on_text, callback, opts)
  opts = opts or {}
  vim.ui.input({ prompt = prompt, default = default }, function(text)
    if text == nil or (opts.unchanged and text == default) or (opts.nonblank and vim.trim(text) == "") then
      return M.done(callback, nil, nil)
    end
    on_text(text)
  end)
end

--- Put `lines` into the scratch buffer `bufnr` (left read-only and unmodified) and show it: in the window
--- that shows it already, else in a new window opened with `config.wake_split`. Returns `bufnr`.
function M.show_lines(bufnr, lines)
  local compat = require("mnemon.compat")
  compat.set_option(bufnr, "modifiable", true)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  compat.set_option(bufnr, "modifiable", false)
  compat.set_option(bufnr, "modified", false)
  local win = vim.fn.bufwinid(bufnr)
  if win == -1 then
    vim.cmd(client.config.wake_split)
    vim.api.nvim_win_set_buf(0, bufnr)
  else
    vim.api.nvim_set_current_win(win)
  end
  return bufnr
end

--- The stable error code of an LSP error (`data.code`), or nil.
function M.error_code(err)
  if type(err) == "table" and type(err.data) == "table" and client.present(err.data.code) then
    return tostring(err.data.code)
  end
  return nil
end

-- ------------------------------------------------------------------ workspace rows, receipts
-- (moved from init.lua; used by init.lua and views.lua)

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
M.same_uri = same_uri
M.workspace_row = workspace_row
M.workspace_label = workspace_label
M.usage_text = usage_text
M.receipt_text = receipt_text

return M
