-- mnemon.nvim: entry points of the user commands (plugin/mnemon.lua runs require("mnemon").commands[name]);
-- each never throws at the user. Split out of init.lua; the functions they call stay in require("mnemon").

local client = require("mnemon.client")
local manage = require("mnemon.manage")

local levels = vim.log.levels
local notify = client.notify

--- require("mnemon"), at call time (this module is loaded while init.lua is).
local function mnemon()
  return require("mnemon")
end


--- Entry points of the user commands (plugin/mnemon.lua); never throw at the user.
local function guarded(name, fn)
  return function(cmd)
    local ok, problem = pcall(fn, cmd)
    if not ok then
      notify("mnemon: :" .. name .. " failed: " .. tostring(problem), levels.ERROR)
    end
  end
end

local commands = {
  MnemonRemember = guarded("MnemonRemember", function(cmd)
    local space_id, problem = mnemon().parse_remember_args(cmd.args)
    if problem then
      notify("mnemon: not remembered: " .. problem, levels.ERROR)
      return
    end
    mnemon().remember({ line1 = cmd.line1, line2 = cmd.line2, range = cmd.range, branch_scoped = cmd.bang,
      space_id = space_id })
  end),
  MnemonRecall = guarded("MnemonRecall", function(cmd)
    if cmd.bang then
      manage.recall_pick(cmd.args)
    else
      mnemon().recall(cmd.args)
    end
  end),
  MnemonEntries = guarded("MnemonEntries", function(cmd)
    local target = cmd.args ~= "" and cmd.args or nil
    if target and target ~= "user" and target ~= "memory" then
      notify('mnemon: :MnemonEntries takes "user", "memory" or nothing (got "' .. target .. '")', levels.ERROR)
      return
    end
    manage.entries({ target = target })
  end),
  MnemonCompact = guarded("MnemonCompact", function(cmd)
    local target = cmd.args ~= "" and cmd.args or "user"
    if target ~= "user" and target ~= "memory" then
      notify('mnemon: :MnemonCompact takes "user", "memory" or nothing (got "' .. target .. '")', levels.ERROR)
      return
    end
    require("mnemon.compact").compact({ target = target })
  end),
  MnemonSpaces = guarded("MnemonSpaces", function()
    manage.spaces()
  end),
  MnemonSpaceCreate = guarded("MnemonSpaceCreate", function(cmd)
    local name = vim.trim(cmd.args or "")
    vim.ui.input({ prompt = "mnemon: what belongs in " .. name .. "? " }, function(description)
      if description == nil then
        return
      end
      manage.space_create(name, description, { active = not cmd.bang })
    end)
  end),
  MnemonSpaceActivate = guarded("MnemonSpaceActivate", function(cmd)
    manage.space_activate(vim.trim(cmd.args))
  end),
  MnemonSpaceDeactivate = guarded("MnemonSpaceDeactivate", function(cmd)
    manage.space_deactivate(vim.trim(cmd.args))
  end),
  MnemonDocuments = guarded("MnemonDocuments", function(cmd)
    manage.documents({ include_archived = cmd.bang })
  end),
  MnemonWake = guarded("MnemonWake", function(cmd)
    mnemon().wake({ branch = (cmd.args ~= "" and cmd.args) or nil })
  end),
  MnemonStatus = guarded("MnemonStatus", function()
    mnemon().status()
  end),
  MnemonOpenEdit = guarded("MnemonOpenEdit", function()
    require("mnemon.client").open_last_edit()
  end),
  MnemonForget = guarded("MnemonForget", function(cmd)
    local text = cmd.args
    if (text == nil or text == "") and cmd.range > 0 then
      text = mnemon().selection_text(0, cmd.line1, cmd.line2, cmd.range)
    end
    mnemon().forget(text, { target = cmd.bang and "user" or "memory" })
  end),
  MnemonDocCreate = guarded("MnemonDocCreate", function(cmd)
    mnemon().doc_create({ title = (cmd.args ~= "" and cmd.args) or nil, new = cmd.bang })
  end),
  MnemonDocSearch = guarded("MnemonDocSearch", function(cmd)
    mnemon().doc_search(cmd.args, { include_archived = cmd.bang })
  end),
  MnemonProviders = guarded("MnemonProviders", function()
    require("mnemon.providers").pick()
  end),
  MnemonProposals = guarded("MnemonProposals", function()
    require("mnemon.proposals").review()
  end),
  MnemonReview = guarded("MnemonReview", function()
    require("mnemon.review").review()
  end),
  MnemonImport = guarded("MnemonImport", function()
    require("mnemon.imports").import()
  end),
}

return commands
