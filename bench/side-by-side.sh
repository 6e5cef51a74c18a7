#!/usr/bin/env bash
# The benchmark of record for the policed write path: the yardstick in ../shared/perfref (a
# hand-tuned server doing an intent admission in one transaction and one round trip), run
# unchanged, then Purser's POST /v1/intents admission and its keyed fee path (POST /v1/feedback
# with an Idempotency-Key) from bench/intents.ts (one pair each), then the yardstick again. Prints
# both ratios against the mean of the two yardstick runs, and writes them to
# bench/results/side-by-side-latest.md. Run on a quiet machine from the project's root:
#
#   bash bench/side-by-side.sh            # D=10 seconds per run by default
#
# Needs PostgreSQL on 127.0.0.1:5432 (user postgres). The yardstick's own directory is never
# written to: when it has no node_modules, it is copied to a temporary directory and installed
# there.
set -euo pipefail
project=$(cd "$(dirname "$0")/.." && pwd)
yardstick=${PERFREF_DIR:-$project/../shared/perfref}
seconds=${D:-10}
port=${PERFREF_PORT:-3977}
[[ -f $yardstick/app.js ]] || { echo "no yardstick at $yardstick (set PERFREF_DIR)" >&2; exit 2; }

work=$(mktemp -d)
server=""
cleanup() {
  [[ -n $server ]] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

run_dir=$yardstick
if [[ ! -d $yardstick/node_modules ]]; then
  cp -r "$yardstick" "$work/perfref"
  (cd "$work/perfref" && npm install --no-audit --no-fund --silent >/dev/null)
  run_dir=$work/perfref
fi

psql_() { PGOPTIONS=--client-min-messages=warning psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -q "$@" >/dev/null; }
psql_ -c "DROP DATABASE IF EXISTS perfref" -c "CREATE DATABASE perfref"
psql_ -d perfref -f "$run_dir/schema.sql"
psql_ -d perfref -f "$run_dir/fn.sql"

# The yardstick's write-ahead log position and admitted intents, to report its WAL per admission.
wal_mark() {
  psql -h 127.0.0.1 -U postgres -d perfref -Atc "SELECT pg_current_wal_lsn() || ' ' || (SELECT count(*) FROM intents)"
}

# The CPU counters (Linux /proc, in clock ticks): the machine's busy and total, PostgreSQL's
# processes together (with their reaped children's time: a backend that exits between two marks
# still counts), and the process `$1`.
cpu_mark() {
  local busy_total pg own
  busy_total=$(awk '/^cpu /{t=0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t}' /proc/stat)
  pg=$(for p in $(pgrep -x postgres); do awk '{print $14 + $15 + $16 + $17}' "/proc/$p/stat" 2>/dev/null; done | awk '{s += $1} END {print s + 0}')
  own=$(awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0)
  echo "$busy_total $pg $own"
}

# One yardstick run: its server, its own load generator (as its README runs them), the JSON line
# with the WAL bytes and the CPU (both cores' busy share, core µs in its server and in PostgreSQL)
# per admission added. `yardstick_run <rate>` holds the load to that many requests per second (the
# generator's RATE).
yardstick_run() {
  local rate=${1:-}
  (cd "$run_dir" && PORT=$port POOL=10 exec node app.js >/dev/null 2>&1) &
  server=$!
  sleep 1.5
  local line start end cpu_start cpu_end
  start=$(wal_mark)
  cpu_start=$(cpu_mark "$server")
  line=$(cd "$run_dir" && env PORT=$port EP=v2 C=50 D=$seconds AGENTS=200 ${rate:+RATE=$rate} node load.js | tail -1)
  cpu_end=$(cpu_mark "$server")
  end=$(wal_mark)
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=""
  sleep 0.5
  local wal
  wal=$(psql -h 127.0.0.1 -U postgres -d perfref -Atc \
    "SELECT round(pg_wal_lsn_diff('${end% *}', '${start% *}') / greatest(${end#* } - ${start#* }, 1))")
  node -e '
const l = JSON.parse(process.argv[1]);
l.walPerRow = Number(process.argv[2]);
const [b0, t0, pg0, own0] = process.argv[3].split(" ").map(Number);
const [b1, t1, pg1, own1] = process.argv[4].split(" ").map(Number);
const rows = Number(process.argv[5]);
const micros = (ticks) => Math.round((ticks / 100) * 1e6 / rows);
if (rows > 0 && t1 > t0) l.cpu = { busyPercent: Math.round(100 * (b1 - b0) / (t1 - t0)), serverMicros: micros(own1 - own0), databaseMicros: micros(pg1 - pg0) };
console.log(JSON.stringify(l));' "$line" "$wal" "$cpu_start" "$cpu_end" "$(( ${end#* } - ${start#* } ))"
}

before=$(yardstick_run)
# The yardstick at half its maximum rate, as Purser's admission is measured there too.
half=$(yardstick_run "$(node -e 'console.log(Math.max(1, Math.round(JSON.parse(process.argv[1]).rps / 2)))' "$before")")
purser=$(cd "$project" && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres BENCH_DURATION=$seconds \
  BENCH_REPEAT=1 npx tsx bench/intents.ts 2>&1)
after=$(yardstick_run)

node - "$before" "$after" "$purser" "$project/bench/results/side-by-side-latest.md" "$half" <<'EOF'
const [before, after, purser, out, halfRun] = process.argv.slice(2);
const yardstickHalf = JSON.parse(halfRun);
const fs = require('node:fs');
const a = JSON.parse(before);
const b = JSON.parse(after);
const mean = (a.rps + b.rps) / 2;
// A row of bench/intents.ts' table: | name | rate | req/s | p50 | p99 | max | requests | non-2xx | errors | WAL |
const row = (prefix) => {
  const line = purser.split('\n').find((l) => l.startsWith(`| ${prefix}`));
  if (!line) return null;
  const cells = line.split('|').map((c) => c.trim());
  const n = (c) => Number(c.replace(/,/g, ''));
  return { rps: n(cells[3]), p50: n(cells[4]), p99: n(cells[5]), wal: cells[10] ? n(cells[10]) : null };
};
const admission = row('POST /v1/intents (admission)');
const ownReference = row('reference for /v1/intents: one SQL');
const half = row('POST /v1/intents at half its maximum rate');
const fee = row('POST /v1/feedback');
const read = row('GET /v1/intents/{id}');
const hello = row("Fastify's hello-world");
// bench/intents.ts' CPU table: | name | busy% | server µs | PostgreSQL µs |
const cpuOf = (prefix) => {
  const line = purser.split('\n').find((l) => l.startsWith(`| ${prefix}`) && /\| \d+% \|/.test(l));
  if (!line) return null;
  const cells = line.split('|').map((c) => c.trim());
  return { busyPercent: Number(cells[2].replace('%', '')), serverMicros: Number(cells[3]), databaseMicros: Number(cells[4]) };
};
const cpuRow = (name, cpu) => (cpu ? [`| ${name} | ${cpu.busyPercent}% | ${cpu.serverMicros} | ${cpu.databaseMicros} |`] : []);
if (!admission || !fee) {
  console.error(purser);
  console.error('bench/intents.ts did not report its rows');
  process.exit(1);
}
const lines = [
  '# Side by side with the yardstick (../shared/perfref), one run',
  '',
  `- Run: ${new Date().toISOString()}; ${require('node:os').cpus().length} cores; load average ${require('node:os')
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}`,
  '',
  '| Run | req/s | p50 ms | p99 ms | WAL bytes per admission |',
  '|---|--:|--:|--:|--:|',
  `| perfref (before) | ${Math.round(a.rps)} | ${a.p50} | ${a.p99} | ${a.walPerRow ?? ''} |`,
  `| perfref at half its maximum rate | ${Math.round(yardstickHalf.rps)} | ${yardstickHalf.p50} | ${yardstickHalf.p99} | |`,
  `| POST /v1/intents (admission) | ${Math.round(admission.rps)} | ${admission.p50} | ${admission.p99} | ${admission.wal ?? ''} |`,
  ...(ownReference
    ? [`| Purser's writes in one SQL call (bench/reference-admission.ts) | ${Math.round(ownReference.rps)} | ${ownReference.p50} | ${ownReference.p99} | ${ownReference.wal ?? ''} |`]
    : []),
  ...(half ? [`| POST /v1/intents at half its maximum rate | ${Math.round(half.rps)} | ${half.p50} | ${half.p99} | |`] : []),
  `| POST /v1/feedback, keyed fee path | ${Math.round(fee.rps)} | ${fee.p50} | ${fee.p99} | |`,
  ...(read ? [`| GET /v1/intents/{id}, authenticated read | ${Math.round(read.rps)} | ${read.p50} | ${read.p99} | |`] : []),
  ...(hello ? [`| Fastify's hello-world | ${Math.round(hello.rps)} | ${hello.p50} | ${hello.p99} | |`] : []),
  `| perfref (after) | ${Math.round(b.rps)} | ${b.p50} | ${b.p99} | ${b.walPerRow ?? ''} |`,
  '',
  `ratio admission/perfref: **${(admission.rps / mean).toFixed(2)}** (goal ≥ 0.85)`,
  `ratio keyed fee path/perfref: **${(fee.rps / mean).toFixed(2)}** (goal ≥ 0.85)`,
  ...(half
    ? [`admission p99 at half its maximum rate: ${half.p99} ms (goal ≤ 25 ms; the yardstick's at half its own: ${yardstickHalf.p99} ms)`]
    : []),
  ...(ownReference
    ? [`ceiling: Purser's admission writes in one SQL call / perfref: ${(ownReference.rps / mean).toFixed(2)}; the admission / that call: ${(admission.rps / ownReference.rps).toFixed(2)}`]
    : []),
  ...(read && hello ? [`authenticated read / Fastify's hello-world: ${(read.rps / hello.rps).toFixed(2)}`] : []),
  '',
  'Where the cores went, per admission (the warm-up included; the rest of the busy time is the load generator\'s):',
  '',
  '| Run | cores busy | server core µs | PostgreSQL core µs |',
  '|---|--:|--:|--:|',
  ...cpuRow('perfref (before)', a.cpu),
  ...cpuRow('POST /v1/intents (admission)', cpuOf('POST /v1/intents (admission)')),
  ...cpuRow("Purser's writes in one SQL call", cpuOf('reference for /v1/intents: one SQL')),
  ...cpuRow('POST /v1/feedback, keyed fee path', cpuOf('POST /v1/feedback')),
  ...cpuRow('perfref (after)', b.cpu),
  '',
];
const md = lines.join('\n');
fs.writeFileSync(out, md);
console.log(md);
EOF
