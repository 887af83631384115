-- mnemon.nvim: review an assistant's workspace memory proposals (seed 002) with vim.ui.select.
--
--   :MnemonProposals   pick a proposal, then Verify or Reject it (two choices, two keystrokes with the
--                      default inputlist UI: the proposal's number, then 1 or 2).
--
-- Requests: mnemon/records/list {proposals = true}, mnemon/records/verify|reject {id, recordScope}.

local client = require("mnemon.client")
local util = require("mnemon.util")

local M = {}

local levels = vim.log.levels
local notify = client.notify
local done = util.done
local one_line = util.one_line

--- One line per proposal: "[scope type] title — content".
function M.format_item(record)
  return string.format("[%s %s] %s — %s", tostring(record.scope), tostring(record.type), one_line(record.title, 60),
    one_line(record.content, 80))
end

--- The verdicts offered for a chosen proposal, in order.
M.actions = { "Verify", "Reject" }

--- List the workspace's pending proposals, let the user pick one and verify or reject it.
--- opts: bufnr. callback(err, result) with the verify/reject receipt (nil result when cancelled or none).
function M.review(opts, callback)
  opts = opts or {}
  local bufnr = util.buf(opts.bufnr)
  local c, root = util.client_or_fail(bufnr, callback)
  if not c then
    return
  end
  local workspace = client.root_uri(root)
  client.request(c, "mnemon/records/list", { workspace = workspace, proposals = true }, function(err, result)
    if err then
      notify("mnemon: proposals not listed: " .. client.format_error(err), levels.ERROR)
      return done(callback, err)
    end
    local records = type(result) == "table" and type(result.records) == "table" and result.records or {}
    if #records == 0 then
      notify("mnemon: no proposals wait for review", levels.INFO)
      return done(callback, nil, nil)
    end
    vim.ui.select(records, { prompt = string.format("mnemon: %d proposal(s) to review", #records),
      format_item = M.format_item }, function(record)
      if not record then
        return done(callback, nil, nil)
      end
      vim.ui.select(M.actions, { prompt = "mnemon: " .. one_line(record.title, 60) }, function(action)
        if not action then
          return done(callback, nil, nil)
        end
        local method = action == "Verify" and "mnemon/records/verify" or "mnemon/records/reject"
        local params = { workspace = workspace, id = record.id, recordScope = record.scope }
        client.request(c, method, params, function(err2, receipt)
          if err2 then
            notify("mnemon: not " .. (action == "Verify" and "verified" or "rejected") .. ": "
              .. client.format_error(err2), levels.ERROR)
            return done(callback, err2)
          end
          notify(string.format("mnemon: %s: %s", type(receipt) == "table" and tostring(receipt.message) or action,
            one_line(record.title, 60)), levels.INFO)
          done(callback, nil, receipt)
        end, { bufnr = bufnr })
      end)
    end)
  end, { bufnr = bufnr })
end

return M
