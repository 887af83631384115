-- mnemon.nvim: Mnemon Packs (reference section 9): back up, move or share a whole memory as one ZIP.
--
--   :MnemonPackExport[!] [full|runtime|documents|memory-spaces] [{file}]
--        write this workspace's memory to {file} (default: asked, proposing the server's exports folder,
--        mnemon/pack/exportFolder: <global root>/state/pack-exports/mnemon-backup-<time>.zip, never the
--        cwd, a git work tree where `git add .` would commit the memory); the user profile (USER.md
--        entries) is left out (and counted) unless ! includes it
--   :MnemonPackImport[!] {file} [runtime] [documents] [memory-spaces]
--        validate {file} (mnemon/pack/inspect), then merge it in; with ! replace the components
--        (asked to confirm first); naming components imports only those
--
-- Requests: mnemon/pack/exportFolder {workspace}, mnemon/pack/export {workspace, packScope, path, includeUserProfile},
-- mnemon/pack/inspect {workspace, path},
-- mnemon/pack/import {workspace, path, mode, components}. A refused import changed nothing.

local M = {}

local SCOPES = { full = true, runtime = true, documents = true, ["memory-spaces"] = true }
local COMPONENTS = { runtime = true, documents = true, ["memory-spaces"] = true }

local client = require("mnemon.client")
local util = require("mnemon.util")

local done = util.done

--- The prelude of every pack command: the buffer's client and folder (or, when there is none, the reason
--- notified and `callback({message})`), and `call(method, params, on_result)`, which sends one request
--- for that folder and on an error notifies "mnemon: <failure><error>" and calls `callback(err)`.
--- Returns `call` and `opts.path` made absolute, or nil.
local function pack_session(opts, failure, callback)
  local c, root = util.client_or_fail(util.buf(opts.bufnr), callback)
  if not c then
    return nil
  end
  local workspace = client.root_uri(root)
  local function call(method, params, on_result)
    params.workspace = workspace
    client.request(c, method, params, function(err, result)
      if err then
        client.notify("mnemon: " .. failure .. client.format_error(err), vim.log.levels.ERROR)
        return done(callback, err)
      end
      on_result(result)
    end, { bufnr = opts.bufnr })
  end
  return call, opts.path and vim.fn.fnamemodify(opts.path, ":p") or nil
end

--- The file an export proposes (mnemon/pack/exportFolder): callback(nil, {folder, path}) or callback(err).
function M.export_folder(opts, callback)
  local call = pack_session(opts or {}, "pack not exported: ", callback)
  if not call then
    return
  end
  call("mnemon/pack/exportFolder", {}, function(result)
    done(callback, nil, result)
  end)
end

--- "runtime: 3 item(s), 3 file(s), 538 bytes; ..." from a manifest summary.
function M.summary_text(summary)
  local parts = {}
  for _, row in ipairs(summary or {}) do
    table.insert(parts, string.format("%s: %d item(s), %d file(s), %d bytes", tostring(row.component),
      row.items or 0, row.files or 0, row.bytes or 0))
  end
  return table.concat(parts, "; ")
end

--- One line for an import receipt (or, with `dryRun`, for what the import would do): per component what
--- was added, already here, under a new id and (replace) removed; a shared user profile merged instead of
--- replaced; the backup a replace made first and the command restoring it.
function M.receipt_text(receipt)
  local parts = {}
  local replace = receipt.mode == "replace"
  for _, key in ipairs({ "runtime", "documents", "spaces" }) do
    local part = receipt[key]
    if type(part) == "table" then
      local text = string.format("%s: %d added, %d already here", key, part.added or 0, part.skipped or 0)
      if type(part.renamed) == "table" and #part.renamed > 0 then
        text = text .. string.format(", %d under a new id", #part.renamed)
      end
      if replace then
        text = text .. string.format(", %d removed", part.removed or 0)
      end
      table.insert(parts, text)
    end
  end
  local text
  if receipt.dryRun == true then
    text = string.format("mnemon: dry run, nothing was written; the import (%s) would do: %s", tostring(receipt.mode),
      table.concat(parts, "; "))
  else
    text = string.format("mnemon: pack imported (%s): %s", tostring(receipt.mode), table.concat(parts, "; "))
  end
  local profile = type(receipt.runtime) == "table" and receipt.runtime.userProfile or nil
  if type(profile) == "table" and profile.optInNeeded == true then
    text = text .. string.format("; USER.md%s was merged, not replaced: %d added, none removed "
      .. "(replaceUserProfile replaces it)", profile.shared == true and " (shared by every workspace)" or "",
      profile.added or 0)
  end
  local backup = receipt.backup
  if type(backup) == "table" then
    if backup.written == true then
      text = text .. string.format("; what was replaced is saved in %s (restore: %s)", tostring(backup.path),
        tostring(backup.restore))
    else
      text = text .. string.format("; what would be replaced would first be saved in %s", tostring(backup.path))
    end
  end
  return text
end

local function entries(n)
  return string.format("%d %s", n, n == 1 and "entry" or "entries")
end

--- One line for an export result (`path`: the file written): its size in bytes, what each component holds,
--- and what was left out and why (the user profile unless included; third-party spaces always).
function M.exported_text(result, path)
  local profile = type(result.userProfile) == "table" and result.userProfile or {}
  local left_out, carried = tonumber(profile.leftOut) or 0, tonumber(profile.carried) or 0
  local text = string.format("mnemon: exported %s pack to %s (%d bytes; %s)", tostring(result.scope), path,
    tonumber(result.bytes) or 0, M.summary_text(result.summary))
  if left_out > 0 then
    text = text .. string.format("; USER.md: %s left out (your user profile stays here; :MnemonPackExport! carries it)",
      entries(left_out))
  elseif carried > 0 then
    text = text .. string.format("; USER.md: carries %s (your user profile)", entries(carried))
  end
  local providers = type(result.providerSpaces) == "table" and tonumber(result.providerSpaces.leftOut) or 0
  if providers > 0 then
    text = text .. string.format("; memory-spaces: %d provider %s left out (packs never carry third-party "
      .. "connections; their content stays with the provider)", providers, providers == 1 and "space" or "spaces")
  end
  return text
end

--- Export. opts: scope, path (absolute or relative to the cwd), include_user_profile (bool: carry the USER.md
--- entries; default false), bufnr. callback(err, result).
function M.export(opts, callback)
  opts = opts or {}
  local call, path = pack_session(opts, "pack not exported: ", callback)
  if not call then
    return
  end
  call("mnemon/pack/export", { packScope = opts.scope or "full", path = path,
    includeUserProfile = opts.include_user_profile == true }, function(result)
    client.notify(M.exported_text(result, path), vim.log.levels.INFO)
    done(callback, nil, result)
  end)
end

--- Import. opts: path, replace (bool), components (list), bufnr. callback(err, receipt).
function M.import(opts, callback)
  opts = opts or {}
  local call, path = pack_session(opts, "pack not imported (nothing changed): ", callback)
  if not call then
    return
  end
  call("mnemon/pack/inspect", { path = path }, function(inspected)
    local function go()
      call("mnemon/pack/import", { path = path, mode = opts.replace and "replace" or "merge",
        components = (opts.components and #opts.components > 0) and opts.components or nil }, function(receipt)
        client.notify(M.receipt_text(receipt), vim.log.levels.INFO)
        done(callback, nil, receipt)
      end)
    end
    if not opts.replace then
      return go()
    end
    local prompt = string.format("mnemon: replace this workspace's memory with the %s pack of %s (%s)?",
      tostring(inspected.scope), tostring(inspected.exportedAt), M.summary_text(inspected.summary))
    util.menu(prompt, { "Replace", "Cancel" }, { Replace = go }, callback)
  end)
end

--- Parse ":MnemonPackExport" arguments: ([scope], [file]).
function M.parse_export_args(args)
  local scope, path = "full", nil
  for _, word in ipairs(vim.split(vim.trim(args or ""), "%s+", { trimempty = true })) do
    if SCOPES[word] and path == nil and scope == "full" then
      scope = word
    else
      path = word
    end
  end
  return scope, path
end

--- Define the user commands (plugin/mnemon.lua calls this with nvim_create_user_command).
function M.create_commands(create)
  create("MnemonPackExport", function(cmd)
    local scope, path = M.parse_export_args(cmd.args)
    if path then
      return M.export({ scope = scope, path = path, include_user_profile = cmd.bang })
    end
    M.export_folder({}, function(err, proposed)
      if err then
        return
      end
      vim.ui.input({ prompt = "mnemon: save the pack as ", default = proposed.path }, function(answer)
        if answer and answer ~= "" then
          M.export({ scope = scope, path = answer, include_user_profile = cmd.bang })
        end
      end)
    end)
  end, {
    nargs = "*",
    bang = true,
    complete = function()
      return { "full", "runtime", "documents", "memory-spaces" }
    end,
    desc = "mnemon: export this workspace's memory as a pack (! includes your user profile): [full|runtime|documents|memory-spaces] [{file}]",
  })
  create("MnemonPackImport", function(cmd)
    local words = vim.split(vim.trim(cmd.args or ""), "%s+", { trimempty = true })
    local path, components = nil, {}
    for _, word in ipairs(words) do
      if COMPONENTS[word] then
        table.insert(components, word)
      else
        path = word
      end
    end
    if not path then
      client.notify("mnemon: :MnemonPackImport needs a pack file", vim.log.levels.ERROR)
      return
    end
    M.import({ path = path, replace = cmd.bang, components = components })
  end, {
    nargs = "+",
    bang = true,
    complete = "file",
    desc = "mnemon: import a pack {file} (merge; ! replaces, after a confirmation) [runtime] [documents] [memory-spaces]",
  })
end

return M
