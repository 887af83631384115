-- mnemon.nvim: third-party Memory Space providers (:MnemonProviders).
--
--   M.list        callback(err, providers): every known provider with its state (mnemon/providers/list; a
--                 configured provider with a server to reach also its connection state, M.connection_words)
--   M.pick        pick a provider, then one of the actions its state and capabilities allow
--   M.configure   set one service field (a secret through inputsecret(), never echoed)
--   M.enable, M.disable, M.test, M.discover, M.create_space
--
-- Every action is one mnemon/providers/* request (or mnemon/spaces/create with `provider`): the server
-- validates and stores (credentials 0600 in state/memory-providers.json) and answers with configured
-- field *names* only. Nothing here keeps a credential: it is read, sent once and dropped.
--
-- Gating (seed 000: "the UI and agents do not pretend missing behavior exists"): a provider that is not
-- installed offers nothing; Enable only while disabled; Disable and Test only once configured; Discover
-- and "Create space" only when its capabilities declare `discover` / `createNamespace`.

local client = require("mnemon.client")
local util = require("mnemon.util")

local M = {}

local levels = vim.log.levels
local notify = client.notify
local done = util.done

--- Health answers of this session (`mnemon/providers/test` or `enable`), by root and provider id: the
--- list itself opens no engine.
M.health = {}

local function request(opts, method, params, failure, callback, on_result)
  local bufnr = util.buf(opts.bufnr)
  local c, root = util.client_or_fail(bufnr, callback)
  if not c then
    return
  end
  params.workspace = client.root_uri(root)
  client.request(c, method, params, function(err, result)
    if err then
      local msg = util.fail(failure, err)
      return done(callback, { code = err.code, message = msg, data = err.data })
    end
    on_result(result, root)
  end, { bufnr = bufnr })
end

--- `callback(err, providers, root)` (mnemon/providers/list).
function M.list(opts, callback)
  opts = opts or {}
  request(opts, "mnemon/providers/list", {}, "providers not listed: ", callback, function(result, root)
    done(callback, nil, type(result) == "table" and type(result.providers) == "table" and result.providers or {}, root)
  end)
end

--- "installed, not configured", "enabled, 2 spaces", ...
function M.state(p)
  if not p.installed then
    return "not installed"
  elseif type(p.capabilities) ~= "table" then
    return "installed, cannot be loaded"
  elseif not p.configured then
    return "installed, not configured"
  elseif not p.enabled then
    return "configured, disabled"
  end
  return string.format("enabled, %d space%s", p.spaces or 0, p.spaces == 1 and "" or "s")
end

--- Lists of what the capabilities `c` can and cannot do, in words.
function M.capability_words(c)
  local can, cannot = {}, {}
  local function flag(on, word)
    table.insert(on and can or cannot, word)
  end
  flag(c.search, "recall")
  flag(c.browse, "browse")
  flag(c.entities, "entities")
  flag(c.related, "related")
  flag(c.graph, "graph")
  flag(c.link, "link")
  if c.forget and c.delete ~= "unsupported" then
    table.insert(can, "forget (" .. tostring(c.delete) .. " delete)")
  else
    table.insert(cannot, "forget")
  end
  flag(c.merge, "merge")
  table.insert(can, tostring(c.write) .. " writes")
  flag(c.discover, "discover namespaces")
  flag(c.createNamespace, "create namespaces")
  return can, cannot
end

--- The connection state the list gives a configured provider with a server to reach (PostgreSQL; read-only,
--- no engine opened, never a credential): "connected (PostgreSQL 16.2 as role mnemon; ...)" or
--- "unreachable: <reason>"; nil without one.
function M.connection_words(p)
  local c = p.installed and type(p.connection) == "table" and p.connection or nil
  if not c then
    return nil
  end
  if c.state == "connected" then
    return "connected (" .. tostring(c.message) .. ")"
  end
  return "unreachable: " .. tostring(c.message)
end

--- One picker line: "Holographic (holographic): enabled, 1 space; healthy", or with the list's connection
--- state (newer than a Test of this session, so it speaks first): "PostgreSQL (postgres): enabled, 1 space;
--- unreachable: <reason>".
function M.format_provider(p, root)
  local health = M.health[tostring(root)] and M.health[tostring(root)][p.providerId]
  local text = string.format("%s (%s): %s", tostring(p.label), tostring(p.providerId), M.state(p))
  local link = M.connection_words(p)
  if link then
    text = text .. "; " .. link
  elseif health then
    text = text .. (health.ok and "; healthy" or "; unhealthy")
  end
  return text
end

--- The actions `p` offers (see the module head).
function M.actions(p)
  if not p.installed or type(p.capabilities) ~= "table" then
    return {}
  end
  local out = { "Configure" }
  if not p.enabled then
    table.insert(out, "Enable")
  else
    table.insert(out, "Disable")
  end
  if p.configured then
    table.insert(out, "Test")
  end
  if p.enabled and p.capabilities.discover then
    table.insert(out, "Discover")
  end
  if p.enabled and p.capabilities.createNamespace then
    table.insert(out, "Create space")
  end
  return out
end

local function remember_health(root, provider_id, health)
  M.health[tostring(root)] = M.health[tostring(root)] or {}
  M.health[tostring(root)][provider_id] = health
end

--- The end of every change: say `text` (INFO), let the statusline read again, `callback(nil, result)`.
local function finish(root, text, result, callback)
  notify(text, levels.INFO)
  pcall(function() require("mnemon.statusline").invalidate(root) end)
  done(callback, nil, result)
end

--- Enable `p` (opens the engine, discovers its namespaces). callback(err, result).
function M.enable(p, opts, callback)
  request(opts or {}, "mnemon/providers/enable", { providerId = p.providerId }, "provider not enabled: ", callback,
    function(result, root)
      if type(result.health) == "table" then
        remember_health(root, p.providerId, result.health)
      end
      local found = type(result.discovered) == "table" and #result.discovered or 0
      finish(root, string.format("mnemon: enabled %s (%d space%s discovered)", tostring(p.label), found,
        found == 1 and "" or "s"), result, callback)
    end)
end

--- Disable `p`: its spaces leave this root (never its data). callback(err, result).
function M.disable(p, opts, callback)
  request(opts or {}, "mnemon/providers/disable", { providerId = p.providerId }, "provider not disabled: ", callback,
    function(result, root)
      finish(root, string.format("mnemon: disabled %s; its spaces left this workspace (their data stays in %s)",
        tostring(p.label), tostring(p.label)), result, callback)
    end)
end

--- Test `p` with its stored configuration (writes nothing). callback(err, result).
function M.test(p, opts, callback)
  request(opts or {}, "mnemon/providers/test", { providerId = p.providerId }, "provider test failed: ", callback,
    function(result, root)
      local h = type(result.health) == "table" and result.health or {}
      remember_health(root, p.providerId, h)
      local n = type(result.namespaces) == "table" and #result.namespaces or 0
      local parts = { tostring(h.engine) }
      if type(h.items) == "number" then
        table.insert(parts, h.items .. " items")
      end
      if type(h.latencyMs) == "number" then
        table.insert(parts, string.format("%d ms", math.floor(h.latencyMs + 0.5)))
      end
      notify(string.format("mnemon: %s is %s (%s; %d namespace%s)%s", tostring(p.label),
        h.ok and "healthy" or "not healthy", table.concat(parts, ", "), n, n == 1 and "" or "s",
        (h.message and h.message ~= "") and (": " .. tostring(h.message)) or ""), h.ok and levels.INFO or levels.WARN)
      done(callback, nil, result)
    end)
end

--- List an enabled provider's namespaces into spaces again. callback(err, result).
function M.discover(p, opts, callback)
  request(opts or {}, "mnemon/providers/discover", { providerId = p.providerId }, "nothing discovered: ", callback,
    function(result, root)
      local n = type(result.spaces) == "table" and #result.spaces or 0
      finish(root, string.format("mnemon: %s has %d space%s", tostring(p.label), n, n == 1 and "" or "s"), result,
        callback)
    end)
end

--- Create the space `name` as a new namespace of `p` (active for reading). callback(err, space).
function M.create_space(p, name, description, opts, callback)
  request(opts or {}, "mnemon/spaces/create", { name = name, description = description or "", active = true,
    provider = p.providerId }, "space not created: ", callback, function(result, root)
      finish(root, string.format("mnemon: space %s created in %s (%s), active for reading", tostring(result.name),
        tostring(p.label), tostring(result.id)), result, callback)
    end)
end

--- Read a secret without echoing it (inputsecret()); `on_value(text)` unless cancelled (nil or an
--- interrupt). Kept apart so that tests and UIs can replace it.
function M.input_secret(prompt, on_value)
  local ok, value = pcall(vim.fn.inputsecret, prompt)
  if ok and value ~= nil then
    on_value(value)
  else
    on_value(nil)
  end
end

--- Set one service field of `p`: `field` as picked, `value` the text (a secret field with an empty value
--- is cleared: clearSecrets). callback(err, view).
function M.configure_field(p, field, secret, value, opts, callback)
  local params = { providerId = p.providerId }
  if secret and value == "" then
    params.clearSecrets = { field }
  else
    params.services = { [field] = value }
  end
  request(opts or {}, "mnemon/providers/configure", params, field .. " not saved: ", callback, function(result, root)
    finish(root, string.format("mnemon: %s: %s %s", tostring(p.label), field,
      params.clearSecrets and "cleared" or "saved"), result, callback)
  end)
end

--- Pick a field of `p` (its own service fields, then its secrets; set ones marked), then its value:
--- vim.ui.input for a plain field, M.input_secret for a secret. "(defaults)" configures a provider with
--- no field set. callback(err, view).
function M.configure(p, opts, callback)
  local fields = type(p.fields) == "table" and p.fields or {}
  local secret = {}
  for _, name in ipairs(type(fields.secret) == "table" and fields.secret or {}) do
    secret[name] = true
  end
  local items = {}
  if not p.configured then
    table.insert(items, { label = "(defaults)", defaults = true })
  end
  local function set_of(list)
    local out = {}
    for _, name in ipairs(type(list) == "table" and list or {}) do
      out[name] = true
    end
    return out
  end
  local set = set_of(p.configuredFields)
  for name in pairs(set_of(p.configuredSecrets)) do
    set[name] = true
  end
  for _, name in ipairs(type(fields.service) == "table" and fields.service or {}) do
    if not secret[name] then
      table.insert(items, { label = name, field = name })
    end
  end
  for _, name in ipairs(type(fields.secret) == "table" and fields.secret or {}) do
    table.insert(items, { label = name, field = name, secret = true })
  end
  local function format(item)
    if item.defaults then
      return "(defaults): configure with no field set"
    end
    return string.format("%s%s%s", item.label, item.secret and " [secret]" or "", set[item.field] and " (set)" or "")
  end
  util.pick(items, { noun = { "field", "fields" }, format_item = format, kind = "mnemon.provider.field",
    empty = "mnemon: " .. tostring(p.label) .. " has no fields to set" }, function(item)
    if item.defaults then
      return request(opts or {}, "mnemon/providers/configure", { providerId = p.providerId, services = vim.empty_dict() },
        "provider not configured: ", callback, function(result, root)
          finish(root, string.format("mnemon: %s configured with its defaults; enable it to use it",
            tostring(p.label)), result, callback)
        end)
    end
    local prompt = string.format("mnemon: %s %s: ", tostring(p.label), item.field)
    local function send(value)
      if value == nil then
        return done(callback, nil, nil)
      end
      M.configure_field(p, item.field, item.secret, value, opts, callback)
    end
    if item.secret then
      M.input_secret(prompt .. "(not shown; empty clears it) ", send)
    else
      vim.ui.input({ prompt = prompt }, send)
    end
  end, callback)
end

--- The action menu of `p`; `root` is the workspace root the list came from.
function M.menu(p, root, opts, callback)
  local actions = M.actions(p)
  if #actions == 0 then
    notify(string.format("mnemon: %s is %s; nothing to do here (its package would be the distribution "
      .. "mnemon-ls-provider-%s, installed into mnemon-ls's Python)", tostring(p.label), M.state(p),
      tostring(p.providerId)), levels.INFO)
    return done(callback, nil, nil)
  end
  local prompt = "mnemon: " .. tostring(p.label)
  if type(p.capabilities) == "table" then
    local can, cannot = M.capability_words(p.capabilities)
    prompt = prompt .. " (can: " .. table.concat(can, ", ")
      .. (#cannot > 0 and ("; cannot: " .. table.concat(cannot, ", ")) or "") .. ")"
  end
  util.menu(prompt, actions, {
    Configure = function() M.configure(p, opts, callback) end,
    Enable = function() M.enable(p, opts, callback) end,
    Disable = function() M.disable(p, opts, callback) end,
    Test = function() M.test(p, opts, callback) end,
    Discover = function() M.discover(p, opts, callback) end,
    ["Create space"] = function()
      util.ask("mnemon: name of the new space in " .. tostring(p.label) .. ": ", nil, function(name)
        util.ask("mnemon: what belongs in " .. name .. "? ", nil, function(description)
          M.create_space(p, name, description, opts, callback)
        end, callback)
      end, callback, { nonblank = true })
    end,
  }, callback)
end

--- :MnemonProviders: pick a provider (installed ones first), then an action. callback(err, result).
function M.pick(opts, callback)
  opts = opts or {}
  M.list(opts, function(err, providers, root)
    if err then
      return done(callback, err)
    end
    local ordered = {}
    for _, installed in ipairs({ true, false }) do
      for _, p in ipairs(providers) do
        if (p.installed == true) == installed then
          table.insert(ordered, p)
        end
      end
    end
    util.pick(ordered, { noun = { "provider", "providers" }, kind = "mnemon.provider",
      format_item = function(p) return M.format_provider(p, root) end,
      empty = "mnemon: mnemon-ls knows no provider" }, function(p)
      M.menu(p, root, opts, callback)
    end, callback)
  end)
end

return M
