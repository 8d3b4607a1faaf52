-- Argo CD health check for onto.paas/OntoPlatform.
--
-- Argo CD runs this script with the live object as the global `obj` and reads the
-- table it returns: {status = "Healthy"|"Progressing"|"Degraded", message = "..."}.
-- It judges the platform as kstatus (Flux, kapp) does, from the conditions that
-- the operator's writers derive in one place (api/v1alpha1/conditions.go):
--
--   * being deleted                                   -> Progressing
--   * Reconciling=True (a run in flight)              -> Progressing, its message
--   * metadata.generation > status.observedGeneration -> Progressing
--   * Stalled=True (a failed run, components down)    -> Degraded, its message
--   * Ready=True                                      -> Healthy
--   * anything else (no status yet)                   -> Progressing
--
-- Keep manifests/argocd/argocd-cm-patch.yaml in step: `go test ./manifests/argocd
-- -update` rewrites it from this file.

local hs = {}

-- condition returns the status condition of the given type, or nil.
local function condition(typ)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == typ then
      return c
    end
  end
  return nil
end

-- describe returns the condition's message, else its reason, else fallback.
local function describe(c, fallback)
  if c.message ~= nil and c.message ~= "" then
    return c.message
  end
  if c.reason ~= nil and c.reason ~= "" then
    return c.reason
  end
  return fallback
end

if obj.metadata.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = "the platform is being deleted"
  return hs
end

if obj.status == nil then
  hs.status = "Progressing"
  hs.message = "waiting for the operator to report the platform's status"
  return hs
end

-- A run in flight says what it is doing; its message is worth more than the
-- generation check below, which a run in flight also meets.
local reconciling = condition("Reconciling")
if reconciling ~= nil and reconciling.status == "True" then
  hs.status = "Progressing"
  hs.message = describe(reconciling, "a run is in progress")
  return hs
end

-- As kstatus does, compare generations only once the operator has recorded one.
local observed = obj.status.observedGeneration
local generation = obj.metadata.generation
if observed ~= nil and generation ~= nil and generation > observed then
  hs.status = "Progressing"
  hs.message = "waiting for the spec to be observed (generation " .. generation ..
    ", observed " .. observed .. ")"
  return hs
end

local stalled = condition("Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = describe(stalled, "the last run failed")
  return hs
end

local ready = condition("Ready")
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = describe(ready, "the platform is ready")
  return hs
end

hs.status = "Progressing"
if ready ~= nil then
  hs.message = describe(ready, "waiting for the platform to become ready")
else
  hs.message = "waiting for the operator to report the platform's status"
end
return hs
