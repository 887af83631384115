-- A statusline component: the git branch mnemon-ls sees and the MEMORY.md usage of the current buffer's
-- workspace, e.g. "mnemon main · 2 entries · 57/10240 B" (the entries the wake shows on this branch).
--
--   vim.o.statusline = "%f %= %{v:lua.require'mnemon'.statusline()}"
--
-- Never blocks and never starts a server: it returns the last known text at once and asks mnemon/status
-- in the background when that is missing, older than `max_age_ms` or invalidated (a branch change, a
-- repaired projection, a change made from this plugin), then redraws the status lines. "" when no
-- mnemon-ls client serves the buffer.

local client = require("mnemon.client")
local compat = require("mnemon.compat")

local M = {}

--- Seconds-scale freshness: changes made outside this Neovim (the CLI, another editor) show within it.
M.max_age_ms = 5000

--- root -> {text, at (uv.now() ms), row, pending, dirty}
M.cache = {}

--- Forget every cached text (the next statusline() asks again).
function M.invalidate(root)
  for key, entry in pairs(M.cache) do
    if root == nil or key == root then
      entry.dirty = true
    end
  end
end

local function usage(row)
  local entries = type(row.entries) == "table" and row.entries or {}
  local use = type(row.usage) == "table" and type(row.usage.memory) == "table" and row.usage.memory or {}
  local n = tonumber(entries.memory) or 0
  return string.format("%d %s · %s/%s B", n, n == 1 and "entry" or "entries", tostring(use.used), tostring(use.limit))
end

--- The text for one mnemon/status workspace row.
function M.format(row)
  local branch = client.present(row.branch) and tostring(row.branch) or "(no branch)"
  return string.format("mnemon %s · %s", branch, usage(row))
end

local function row_for(result, root)
  local rows = type(result) == "table" and type(result.workspaces) == "table" and result.workspaces or {}
  local want = client.root_uri(root)
  for _, row in ipairs(rows) do
    if row.uri == want or (client.present(row.path) and compat.normalize(tostring(row.path)) == root) then
      return row
    end
  end
  return #rows == 1 and rows[1] or nil
end

local function refresh(c, root, entry)
  entry.pending = true
  entry.dirty = false
  client.request(c, "mnemon/status", vim.empty_dict(), function(err, result)
    entry.pending = false
    entry.at = compat.uv.now()
    if err then
      entry.text = "mnemon: not answering"
    else
      local row = row_for(result, root)
      entry.row = row
      entry.text = row and M.format(row) or ""
    end
    pcall(vim.cmd, "redrawstatus!")
    compat.user_event("MnemonStatusChanged", { root = root, text = entry.text })
  end)
end

--- The component's text for `bufnr` (default: the current buffer).
function M.component(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local root = client.root_for_buf(bufnr)
  if not root and type(vim.b[bufnr].mnemon_root) == "string" then
    root = vim.b[bufnr].mnemon_root
  end
  if not root then
    return ""
  end
  local c = client.find_client(root)
  if not c or compat.is_stopped(c) then
    M.cache[root] = nil
    return ""
  end
  local entry = M.cache[root]
  if not entry then
    entry = { text = "mnemon …", at = 0 }
    M.cache[root] = entry
  end
  local stale = entry.dirty or entry.at == 0 or compat.uv.now() - entry.at > M.max_age_ms
  if stale and not entry.pending then
    refresh(c, root, entry)
  end
  return entry.text
end

return M
