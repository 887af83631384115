-- mnemon.nvim: memory where the code is (issue 24).
--
--   :MnemonReview   pick a memory whose cited code changed or is gone, or that nobody updated or confirmed for
--                   reviewAfterDays (mnemon/citations/review), then "Still true: re-anchor to the current code"
--                   (mnemon/citations/reanchor: also restarts its review clock), "Edit" or
--                   "Remove" (each Source's own request: mnemon/runtime/mutate, mnemon/records/edit|forget,
--                   mnemon/documents/archive, mnemon/forget; a document is edited in its file, a Memory
--                   Space item is not edited).
--
-- Code lenses ("2 memories cite this") and hovers on cited code come from the server through the built-in
-- client; M.attach keeps the lenses of a buffer fresh (vim.lsp.codelens.refresh on attach, BufEnter and
-- BufWritePost) when the server offers them. <Plug>(mnemon-codelens-run) runs the lens under the cursor.

local client = require("mnemon.client")
local util = require("mnemon.util")

local M = {}

local levels = vim.log.levels
local notify = client.notify
local done = util.done
local one_line = util.one_line

M.STILL_TRUE = "Still true: re-anchor to the current code"
M.EDIT = "Edit"
M.REMOVE = "Remove"

--- The actions offered for `memory`, in order (a Memory Space item offers no Edit).
function M.actions(memory)
  if memory.source == "spaces" then
    return { M.STILL_TRUE, M.REMOVE }
  end
  return { M.STILL_TRUE, M.EDIT, M.REMOVE }
end

--- A citation in words: "src/app.py:10-24 (changed)".
function M.citation_label(cite)
  local lines = cite.startLine == cite.endLine and tostring(cite.startLine)
    or (tostring(cite.startLine) .. "-" .. tostring(cite.endLine))
  return string.format("%s:%s (%s)", tostring(cite.path), lines, tostring(cite.freshness))
end

--- The file a memory is in, in words: its label, "USER.md" for a USER.md entry.
local function label_of(memory)
  if memory.source == "runtime" and memory.target == "user" then
    return "USER.md"
  end
  return tostring(memory.label)
end

--- One line per memory: "[MEMORY.md 2d] preview — src/lib.py:1-2 (changed)", "[USER.md 120d] preview — review due".
function M.format_item(memory)
  local why = {}
  for _, cite in ipairs(memory.cites or {}) do
    if cite.freshness == "changed" or cite.freshness == "gone" then
      table.insert(why, M.citation_label(cite))
    end
  end
  for _, reason in ipairs(memory.reasons or {}) do
    if reason == "review-due" then
      table.insert(why, "review due")
    end
  end
  return string.format("[%s %s] %s — %s", label_of(memory), tostring(memory.age), one_line(memory.preview, 70),
    table.concat(why, ", "))
end

--- What "Still true" says once done.
function M.still_true_message(answer)
  local days = (type(answer.nextReviewDays) == "number" and answer.nextReviewDays > 0)
    and string.format("; next review in %d days", answer.nextReviewDays) or ""
  if type(answer.keptDamaged) == "string" then
    days = days .. "; the damaged confirmation file was kept at " .. answer.keptDamaged
  end
  if type(answer.cites) ~= "table" or #answer.cites == 0 then
    return "mnemon: confirmed still true" .. days
  end
  return string.format("mnemon: re-anchored %d citation(s) to the current code%s", answer.reanchored or 0, days)
end

--- The request "Edit" sends with `text` ({method, params}), or nil (a document, a space item).
function M.edit_request(workspace, memory, text)
  if memory.source == "runtime" then
    return "mnemon/runtime/mutate", { workspace = workspace, action = "replace", target = memory.target or "memory",
      key = memory.key, content = text }
  elseif memory.source == "records" then
    return "mnemon/records/edit", { workspace = workspace, id = memory.id, recordScope = memory.scope, content = text }
  end
  return nil
end

--- The request "Remove" sends.
function M.remove_request(workspace, memory)
  if memory.source == "runtime" then
    return "mnemon/runtime/mutate", { workspace = workspace, action = "remove", target = memory.target or "memory",
      key = memory.key }
  elseif memory.source == "records" then
    return "mnemon/records/forget", { workspace = workspace, id = memory.id, recordScope = memory.scope }
  elseif memory.source == "documents" then
    return "mnemon/documents/archive", { workspace = workspace, id = memory.id }
  end
  return "mnemon/forget", { workspace = workspace, spaceId = memory.spaceId, id = memory.id }
end

--- List the memories needing review, let the user pick one and an action. opts: bufnr.
--- callback(err, result): the answer of the action's request (nil result when cancelled or none).
function M.review(opts, callback)
  opts = opts or {}
  local bufnr = util.buf(opts.bufnr)
  local c, root = util.client_or_fail(bufnr, callback)
  if not c then
    return
  end
  local workspace = client.root_uri(root)
  local function send(method, params, what, after)
    client.request(c, method, params, function(err, result)
      if err then
        util.fail("not " .. what .. ": ", err)
        return done(callback, err)
      end
      if after then
        after(result)
      end
      M.refresh(bufnr)
      done(callback, nil, result)
    end, { bufnr = bufnr })
  end
  client.request(c, "mnemon/citations/review", { workspace = workspace }, function(err, result)
    if err then
      util.fail("review not listed: ", err)
      return done(callback, err)
    end
    local memories = type(result) == "table" and type(result.memories) == "table" and result.memories or {}
    util.pick(memories, { noun = { "memory needs review", "memories need review" }, format_item = M.format_item,
      kind = "mnemon.review", empty = "mnemon: no memory needs review: every cited line is as it was, none is due for review" }, function(memory)
      util.menu("mnemon: " .. one_line(memory.preview, 60), M.actions(memory), {
        [M.STILL_TRUE] = function()
          send("mnemon/citations/reanchor", { workspace = workspace, source = memory.source, key = memory.key },
            "re-anchored", function(answer)
              notify(M.still_true_message(answer), levels.INFO)
            end)
        end,
        [M.EDIT] = function()
          if memory.source == "documents" then
            return send("mnemon/documents/get", { workspace = workspace, id = memory.id }, "opened", function(doc)
              if type(doc) == "table" and type(doc.path) == "string" then
                vim.cmd(client.config.doc_split .. " " .. vim.fn.fnameescape(doc.path))
              end
            end)
          end
          util.ask("mnemon: " .. tostring(memory.label) .. ": ", memory.content, function(text)
            local method, params = M.edit_request(workspace, memory, text)
            send(method, params, "edited", function()
              notify("mnemon: edited: " .. one_line(text, 60), levels.INFO)
            end)
          end, callback, { unchanged = true, nonblank = true })
        end,
        [M.REMOVE] = function()
          local method, params = M.remove_request(workspace, memory)
          send(method, params, "removed", function()
            notify("mnemon: removed: " .. one_line(memory.preview, 60), levels.INFO)
          end)
        end,
      }, callback)
    end, callback)
  end, { bufnr = bufnr })
end

-- ------------------------------------------------------------------ code lenses

local function offers_lenses(c)
  local caps = c and (c.server_capabilities or c.resolved_capabilities) or {}
  return caps.codeLensProvider ~= nil or caps.code_lens == true
end

-- buffer -> true while a textDocument/codeLens request of this plugin is answered; `again`: asked meanwhile.
local inflight, again = {}, {}

--- Request the lenses of `bufnr` from mnemon-ls `c` and show them (vim.lsp.codelens.on_codelens stores and
--- draws them, as vim.lsp.codelens.refresh would); a refresh asked for while one is answered is sent after it
--- (Neovim's own refresh drops it, so a save during a slow answer kept the lenses of the file before the save).
local function request_lenses(c, bufnr)
  inflight[bufnr] = true
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
  client.request(c, "textDocument/codeLens", params, function(err, result)
    if vim.api.nvim_buf_is_valid(bufnr) then
      pcall(vim.lsp.codelens.on_codelens, err, result, { bufnr = bufnr, client_id = c.id, method = "textDocument/codeLens" })
    end
    inflight[bufnr] = nil
    if again[bufnr] then
      again[bufnr] = nil
      if vim.api.nvim_buf_is_valid(bufnr) then
        request_lenses(c, bufnr)
      end
    end
  end, { bufnr = bufnr })
end

--- Ask mnemon-ls for the lenses of `bufnr` again.
function M.refresh(bufnr)
  bufnr = util.buf(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  local c = nil
  for _, attached in ipairs(require("mnemon.compat").get_clients({ bufnr = bufnr, name = client.config.name })) do
    c = attached
  end
  if not c or not offers_lenses(c) then
    return
  end
  if inflight[bufnr] then
    again[bufnr] = true
    return
  end
  request_lenses(c, bufnr)
end

--- on_attach of every mnemon client: keep `bufnr`'s code lenses fresh when the server offers them.
function M.attach(c, bufnr)
  if not offers_lenses(c) then
    return
  end
  local group = vim.api.nvim_create_augroup("mnemon_codelens_" .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ "BufEnter", "BufWritePost" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      M.refresh(bufnr)
    end,
  })
  M.refresh(bufnr)
end

return M
