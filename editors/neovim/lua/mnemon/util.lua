-- Helpers every mnemon.nvim module shares: callbacks that never throw, the client of a buffer (or why
-- there is none), one-line text. One copy here instead of a prelude in each module.

local client = require("mnemon.client")

local M = {}

local levels = vim.log.levels

--- Run `callback(err, ...)` if given; a failing callback is reported, never raised.
function M.done(callback, err, ...)
  if callback then
    local ok, problem = pcall(callback, err, ...)
    if not ok then
      client.notify("mnemon: callback failed: " .. tostring(problem), levels.ERROR)
    end
  end
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

--- `text` on one line (whitespace runs become one space), cut to `limit` bytes with "..." when longer.
function M.one_line(text, limit)
  local s = vim.trim((tostring(text or "")):gsub("%s+", " "))
  if limit and #s > limit then
    s = s:sub(1, limit - 3) .. "..."
  end
  return s
end

--- Notify `prefix .. format_error(err)` at ERROR and return the message.
function M.fail(prefix, err)
  local msg = "mnemon: " .. prefix .. client.format_error(err)
  client.notify(msg, levels.ERROR)
  return msg
end

--- The stable error code of an LSP error (`data.code`), or nil.
function M.error_code(err)
  if type(err) == "table" and type(err.data) == "table" and client.present(err.data.code) then
    return tostring(err.data.code)
  end
  return nil
end

return M
