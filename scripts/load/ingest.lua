-- wrk script: POSTs agent-shaped runs (12 workloads x 10 sizes x 5 samples) to /api/v1/runs, each
-- with a run_id no other request uses: the start time, the wrk thread and a per-thread counter.
-- The token comes from SLOPEWATCH_TOKEN.

local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

local counter = 0
local stamp = os.time() % 0x100000000

local function body_parts()
  local workloads = {}
  for w = 0, 11 do
    local sizes = {}
    for i = 0, 9 do
      local size = 65536 * 2 ^ i
      local samples = {}
      for k = 0, 4 do
        samples[#samples + 1] = string.format("%.1f", 0.5 * size * (1 + 0.01 * ((k * 7 + i * 3 + w) % 5)))
      end
      sizes[#sizes + 1] = string.format('{"size":%d,"samples_ns":[%s]}', size, table.concat(samples, ","))
    end
    workloads[#workloads + 1] = string.format(
      '{"name":"load-%d","size_unit":"bytes","source_hash":"sha256:00","measurements":[%s]}',
      w, table.concat(sizes, ","))
  end
  local head = '{"run_id":"'
  local middle = '","agent_version":"0.1.0","started_at":"2026-11-29T21:00:00Z",'
    .. '"host":{"name":"load-host","cpu":"Load CPU","kernel":"6.1.0","arch":"x86_64"},'
    .. '"toolchain":{"name":"load-cc","version":"'
  local tail = '","libc":"musl 1.2.5","target":"x86_64-linux-musl","compiler":"cc","flags":"-O2"},'
    .. '"workloads":[' .. table.concat(workloads, ",") .. ']}'
  return head, middle, tail
end

local head, middle, tail = body_parts()

function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. (os.getenv("SLOPEWATCH_TOKEN") or "")
end

function request()
  counter = counter + 1
  local id = string.format("%08x-%04x-4%03x-8%03x-%012x",
    stamp, thread_id % 0x10000, math.floor(counter / 0x1000000000000) % 0x1000, 0, counter % 0x1000000000000)
  -- Spread runs over versions so they do not all queue for one version's summary lock.
  local version = string.format("1.%d", counter % 50)
  return wrk.format(nil, nil, nil, head .. id .. middle .. version .. tail)
end
