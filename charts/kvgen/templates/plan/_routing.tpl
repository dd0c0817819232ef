{{/*
routing (docs/routing.md): the chart's counterpart of kvgen/plan/routing.py check (and pair_problems,
gateway_problems, backend_problems, route_matches), warnings and lru_capacity; its context piece, kvgen.context.routing, is in context/_context.tpl.
*/}}

{{/* kvgen.checkRouting: the section's fields against its mode, and what the gateway mode cannot work with. */}}
{{- define "kvgen.checkRouting" -}}
{{- $s := . -}}
{{- $r := default dict $s.V.routing -}}
{{- $mode := default "none" $r.mode -}}
{{- $d := default dict $s.V.disaggregation -}}
{{- if and (include "kvgen.isSet" (list $d "decodeServer")) (ne (toString $d.role) "prefill") -}}
{{- include "kvgen.problem" (list $s "disaggregation.decodeServer" (printf "names the decode server a prefill server joins, and disaggregation.role is %s" (default "none" $d.role)) "set disaggregation.role: prefill, or leave decodeServer out") -}}
{{- end -}}
{{- if or (and (eq (toString $d.role) "decode") (eq $mode "gateway")) (and (eq (toString $d.role) "prefill") $d.decodeServer) -}}
{{/* pod.labels win over kvgen's on the pod template: the pair's labels must be kvgen's (kvgen/plan/routing.py check) */}}
{{- $podLabels := default dict (default dict $s.V.pod).labels -}}
{{- $pairLabels := ($s.F.Get "files/runtime.yaml" | fromYaml).wiring.pairLabels -}}
{{- range $key := list $pairLabels.pool $pairLabels.role -}}
{{- if hasKey $podLabels $key -}}
{{- include "kvgen.problem" (list $s (printf "pod.labels.%s" $key) (printf "%s is a label kvgen sets on the pods of a prefill/decode pair in routing.mode gateway (the pool's selector, the picker's role filters)" (include "kvgen.quoted" $key)) "remove it from pod.labels") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $pair := list (list "sessionAffinity" "sessionAffinity") (list "picker" "gateway") (list "gateway" "gateway") -}}
{{- $key := index $pair 0 -}}{{- $want := index $pair 1 -}}
{{- if and (include "kvgen.isSet" (list $r $key)) (ne $mode $want) -}}
{{- include "kvgen.problem" (list $s (printf "routing.%s" $key) (printf "routing.%s applies to routing.mode %s, but the mode is %s" $key $want $mode) (printf "set routing.mode: %s, or leave routing.%s out" $want $key)) -}}
{{- end -}}
{{- end -}}
{{- if eq (default "kvgen" $r.naming) "kserve" -}}
{{- $suffix := "-kserve-workload-svc" -}}
{{- $g := default dict $r.gateway -}}
{{- if and (eq $mode "gateway") (include "kvgen.isSet" (list $r "gateway")) (eq (default "pool" $g.backend) "pool") (not (include "kvgen.isSet" (list $g "poolRef"))) -}}{{- $suffix = "-kserve-router-scheduler" -}}{{- end -}}
{{- $longest := printf "%s%s" (toString $s.V.name) $suffix -}}
{{- if gt (len $longest) 63 -}}
{{- include "kvgen.problem" (list $s "routing.naming" (printf "KServe's controller names an object %s (%d characters); over 63 it shortens the name with an MD5 hash (knative kmeta.ChildName), which kvgen does not reproduce" $longest (len $longest)) (printf "shorten name to at most %d characters, or set routing.naming: kvgen" (sub 63 (len $suffix)))) -}}
{{- end -}}
{{- end -}}
{{- if eq $mode "gateway" -}}
{{- if not (include "kvgen.isSet" (list $r "gateway")) -}}
{{- include "kvgen.problem" (list $s "routing.gateway.parentRefs" "required with routing.mode gateway: the Gateway the HTTPRoute attaches to" "name your Gateway, e.g. routing.gateway.parentRefs: [{name: inference-gateway}]") -}}
{{- else -}}
{{- include "kvgen.checkGatewayRoute" (list $s $r.gateway) -}}
{{- include "kvgen.checkGatewayBackend" (list $s $r.gateway) -}}
{{- end -}}
{{- $role := $s.V.disaggregation.role -}}
{{- if eq $role "prefill" -}}
{{- include "kvgen.problem" (list $s "routing.mode" "a prefill server of a prefill/decode pair is picked by its decode server's picker (the prefill profile); it has no route or picker of its own" "set routing.mode none here and disaggregation.decodeServer to the decode server's name, whose spec has routing.mode gateway") -}}
{{- else if eq $role "decode" -}}
{{- include "kvgen.checkDecodePair" $s -}}
{{- end -}}
{{- range $n, $a := default list $s.V.vllm.extraArgs -}}
{{- if eq (replace "_" "-" (splitn "." 2 (splitn "=" 2 (toString $a))._0)._0) "--no-enable-prefix-caching" -}}
{{- include "kvgen.problem" (list $s (printf "vllm.extraArgs[%d]" $n) "--no-enable-prefix-caching turns vLLM's prefix cache off, and routing.mode gateway routes each request to the server that holds its prefix" "remove --no-enable-prefix-caching, or set routing.mode none") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.checkDecodePair: a decode server in routing.mode gateway (kvgen/plan/routing.py pair_problems): its
picker's prefill/decode profiles and the routing sidecar in front of vLLM need kvgen's own picker, a single-node
pod and a free port. */}}
{{- define "kvgen.checkDecodePair" -}}
{{- $s := . -}}
{{- $r := $s.V.routing -}}
{{- if include "kvgen.isSet" (list $r "gateway") -}}
{{- $g := $r.gateway -}}
{{- $service := eq (default "pool" $g.backend) "service" -}}
{{- if or $service (include "kvgen.isSet" (list $g "poolRef")) -}}
{{- $key := ternary "backend" "poolRef" $service -}}
{{- include "kvgen.problem" (list $s (printf "routing.gateway.%s" $key) (printf "a decode server routes through the picker kvgen renders, whose prefill/decode profiles send each request's prefill to a prefill server; %s would leave the prefill servers out" (ternary "the Service" "an existing InferencePool's picker" $service)) "set routing.gateway.backend: pool and leave poolRef out") -}}
{{- end -}}
{{- end -}}
{{- if include "kvgen.isSet" (list (default dict $r.picker) "scorers") -}}
{{- include "kvgen.problem" (list $s "routing.picker.scorers" "a decode server's picker has KServe's prefill/decode profiles, whose scorers and weights are fixed" "leave routing.picker.scorers out") -}}
{{- end -}}
{{- if gt (int64 $s.V.parallelism.nodes) 1 -}}
{{- include "kvgen.problem" (list $s "parallelism.nodes" "the routing sidecar of a decode server in routing.mode gateway runs in a single-node pod; kvgen does not render it for a server spanning several nodes" "serve the decode server on one node, or set routing.mode none") -}}
{{- end -}}
{{- $vllmPort := int64 ($s.F.Get "files/runtime.yaml" | fromYaml).picker.sidecar.vllmPort -}}
{{- if eq (int64 $s.V.service.port) $vllmPort -}}
{{- include "kvgen.problem" (list $s "service.port" (printf "a decode server in routing.mode gateway moves vLLM to port %d, behind the routing sidecar that listens on service.port" $vllmPort) (printf "set service.port to another port than %d, e.g. 8000" $vllmPort)) -}}
{{- end -}}
{{- end -}}

{{/* kvgen.checkGatewayRoute: what Gateway API's HTTPRoute CRD refuses in routing.gateway, as
kvgen/plan/routing.py gateway_problems words it (its HOSTNAME_PATTERN, PATH_RULES): a hostname that is not
its Hostname, a path its CEL rules refuse (quoting their messages), references to one Gateway that its
parentRefs rules refuse. */}}
{{- define "kvgen.checkGatewayRoute" -}}
{{- $s := index . 0 -}}{{- $g := index . 1 -}}
{{- range $i, $h := default list $g.hostnames -}}
{{- $message := "" -}}
{{- if not (regexMatch "^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$" $h) -}}
{{- $message = printf "%s is not a hostname Gateway API's HTTPRoute takes: lowercase letters, digits, '-' and '.', each label beginning and ending with a letter or digit, and a wildcard only as a leading '*.' label" (include "kvgen.quoted" $h) -}}
{{- else if gt (len $h) 253 -}}
{{- $message = "the hostname is longer than 253 characters, the most Gateway API's HTTPRoute takes" -}}
{{- end -}}
{{- if $message -}}
{{- include "kvgen.problem" (list $s (printf "routing.gateway.hostnames[%d]" $i) $message "write a host name as clients send it, e.g. llm.example.com or *.example.com (no scheme, port, path or trailing dot)") -}}
{{- end -}}
{{- end -}}
{{- $path := default "/" $g.pathPrefix -}}
{{- $rules := list
  (list "startsWith" "/" "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']")
  (list "notContains" "//" "must not contain '//' when type one of ['Exact', 'PathPrefix']")
  (list "notContains" "/./" "must not contain '/./' when type one of ['Exact', 'PathPrefix']")
  (list "notContains" "/../" "must not contain '/../' when type one of ['Exact', 'PathPrefix']")
  (list "notContains" "%2f" "must not contain '%2f' when type one of ['Exact', 'PathPrefix']")
  (list "notContains" "%2F" "must not contain '%2F' when type one of ['Exact', 'PathPrefix']")
  (list "notContains" "#" "must not contain '#' when type one of ['Exact', 'PathPrefix']")
  (list "notEndsWith" "/.." "must not end with '/..' when type one of ['Exact', 'PathPrefix']")
  (list "notEndsWith" "/." "must not end with '/.' when type one of ['Exact', 'PathPrefix']")
  (list "matches" "^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$" "must only contain valid characters (matching ^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$) for types ['Exact', 'PathPrefix']")
-}}
{{- range $rule := $rules -}}
{{- $test := index $rule 0 -}}{{- $x := index $rule 1 -}}
{{- $ok := true -}}
{{- if eq $test "startsWith" -}}{{- $ok = hasPrefix $x $path -}}
{{- else if eq $test "notContains" -}}{{- $ok = not (contains $x $path) -}}
{{- else if eq $test "notEndsWith" -}}{{- $ok = not (hasSuffix $x $path) -}}
{{- else -}}{{- $ok = regexMatch $x $path -}}
{{- end -}}
{{- if not $ok -}}
{{- include "kvgen.problem" (list $s "routing.gateway.pathPrefix" (printf "%s is refused by Gateway API's HTTPRoute, whose rule for a path match says: %s" (include "kvgen.quoted" $path) (index $rule 2)) "write the path as clients send it, normalised, e.g. /v1: no '//', '/./' or '/../' and no trailing '/.' or '/..', no '%2F', '#' or '?', and only URL path characters (others %-encoded)") -}}
{{- end -}}
{{- end -}}
{{- $refs := default list $g.parentRefs -}}
{{- range $j, $ref := $refs -}}
{{- $found := false -}}
{{- range $i, $other := $refs -}}
{{- if and (lt $i $j) (not $found) (eq (toString $other.name) (toString $ref.name)) (eq (toString (default "" $other.namespace)) (toString (default "" $ref.namespace))) -}}
{{- $mine := include "kvgen.isSet" (list $ref "sectionName") -}}{{- $theirs := include "kvgen.isSet" (list $other "sectionName") -}}
{{- $message := "" -}}{{- $hint := "" -}}
{{- if ne $mine $theirs -}}
{{- $message = "sectionName must be specified when parentRefs includes 2 or more references to the same parent" -}}
{{- $hint = "give each reference to that Gateway a sectionName (a listener)" -}}
{{- else if or (not $mine) (eq (toString $other.sectionName) (toString $ref.sectionName)) -}}
{{- $message = "sectionName must be unique when parentRefs includes 2 or more references to the same parent" -}}
{{- $hint = "remove the repeated reference, or give each reference to that Gateway its own sectionName" -}}
{{- end -}}
{{- if $message -}}
{{- $found = true -}}
{{- $gateway := include "kvgen.quoted" $ref.name -}}
{{- if $ref.namespace -}}{{- $gateway = printf "%s in namespace %s" $gateway (include "kvgen.quoted" $ref.namespace) -}}{{- end -}}
{{- include "kvgen.problem" (list $s (printf "routing.gateway.parentRefs[%d]" $j) (printf "names the Gateway %s as parentRefs[%d] does, and Gateway API's HTTPRoute says: %s" $gateway $i $message) $hint) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.routeMatches: the HTTPRoute's largest rule's matches and all its matches, as the layout renders the
route (kvgen/plan/routing.py route_matches: KServe's route 8 per model name in v1-model-routing, 19 for the
base model and 9 per adapter; kvgen's prefix rule and one match per adapter). A JSON list of two. */}}
{{- define "kvgen.routeMatches" -}}
{{- $s := index . 0 -}}{{- $g := index . 1 -}}
{{- $n := include "kvgen.routedAdapters" (list $s $g) | int -}}
{{- if eq (default "prefix" $g.rules) "kserve" -}}
{{- toJson (list (mul 8 (add 1 $n)) (add 19 (mul 9 $n))) -}}
{{- else -}}
{{- toJson (list (max 1 $n) (add 1 $n)) -}}
{{- end -}}
{{- end -}}

{{/* kvgen.routedAdapters: the adapters the route matches: every one with rules prefix; with rules kserve those
not named publishers/<namespace>/models/... (an alias KServe input serves beside its adapter, matched with it;
kvgen/plan/routing.py kserve_adapters). */}}
{{- define "kvgen.routedAdapters" -}}
{{- $s := index . 0 -}}{{- $g := index . 1 -}}
{{- $n := 0 -}}
{{- $alias := printf "publishers/%s/models/" (toString $s.V.namespace) -}}
{{- range $a := default list (default dict $s.V.model.lora).adapters -}}
{{- if or (ne (default "prefix" $g.rules) "kserve") (not (hasPrefix $alias (toString $a.name))) -}}{{- $n = add1 $n -}}{{- end -}}
{{- end -}}
{{- $n -}}
{{- end -}}

{{/* kvgen.checkGatewayBackend: routing.gateway's backend, existing pool and rules against what they leave out
or need, and Gateway API's 64 matches per rule and 128 per route (kvgen/plan/routing.py backend_problems). */}}
{{- define "kvgen.checkGatewayBackend" -}}
{{- $s := index . 0 -}}{{- $g := index . 1 -}}
{{- $r := $s.V.routing -}}
{{- $backend := default "pool" $g.backend -}}
{{- $ref := include "kvgen.isSet" (list $g "poolRef") -}}
{{- if and (include "kvgen.isSet" (list $r "picker")) (or (eq $backend "service") $ref) -}}
{{- $why := "with routing.gateway.poolRef kvgen renders none (the existing pool has its own)" -}}
{{- if eq $backend "service" -}}{{- $why = "routing.gateway.backend service renders none (the route goes to the Service)" -}}{{- end -}}
{{- include "kvgen.problem" (list $s "routing.picker" (printf "routing.picker configures the Endpoint Picker kvgen renders, and %s" $why) "leave routing.picker out, or routing.gateway.backend and poolRef") -}}
{{- end -}}
{{- if and $ref (eq $backend "service") -}}
{{- include "kvgen.problem" (list $s "routing.gateway.poolRef" "an existing InferencePool is a backend of routing.gateway.backend pool, and the backend is service" "set routing.gateway.backend: pool, or leave poolRef out") -}}
{{- end -}}
{{- $rules := default "prefix" $g.rules -}}
{{- if eq $rules "kserve" -}}
{{- if not (include "kvgen.isSet" (list $s.V "namespace")) -}}
{{- include "kvgen.problem" (list $s "routing.gateway.rules" "rules kserve's paths name the namespace (/NAMESPACE/NAME/v1/..., /publishers/NAMESPACE/models/...), and the spec has none" "set namespace, or routing.gateway.rules: prefix") -}}
{{- end -}}
{{- if ne (default "/" $g.pathPrefix) "/" -}}
{{- include "kvgen.problem" (list $s "routing.gateway.pathPrefix" "routing.gateway.pathPrefix is the path of rules prefix; rules kserve has KServe's paths" "leave pathPrefix out, or set routing.gateway.rules: prefix") -}}
{{- end -}}
{{- else if include "kvgen.isSet" (list $g "modelName") -}}
{{- include "kvgen.problem" (list $s "routing.gateway.modelName" "routing.gateway.modelName names the model in rules kserve's paths and headers, and the rules are prefix" "set routing.gateway.rules: kserve, or leave modelName out") -}}
{{- end -}}
{{- $counts := include "kvgen.routeMatches" (list $s $g) | fromJsonArray -}}
{{- $n := include "kvgen.routedAdapters" (list $s $g) | int -}}
{{- range $c := list (list (index $counts 0) 64 "rule") (list (index $counts 1) 128 "route") -}}
{{- if gt (int64 (index $c 0)) (int64 (index $c 1)) -}}
{{- include "kvgen.problem" (list $s "model.lora.adapters" (printf "with %d adapters the HTTPRoute of routing.gateway.rules %s holds %d matches in one %s, and Gateway API's HTTPRoute takes at most %d matches per %s" $n $rules (int64 (index $c 0)) (index $c 2) (int64 (index $c 1)) (index $c 2)) "serve at most 7 adapters with rules kserve (8 matches each in its model-routing rule), or set routing.gateway.rules: prefix") -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.routingWarnings: routing with a single server (kvgen/plan/routing.py warnings). A JSON list. */}}
{{- define "kvgen.routingWarnings" -}}
{{- $s := . -}}
{{- $mode := default "none" (default dict $s.V.routing).mode -}}
{{- $most := int64 $s.V.replicas -}}
{{- if $s.V.autoscaling -}}{{- $most = int64 $s.V.autoscaling.maxReplicas -}}{{- end -}}
{{- $out := list -}}
{{- if and (ne $mode "none") (le $most 1) -}}
{{- $out = append $out (printf "routing.mode %s with one replica: every request reaches the same server; routing keeps the caches warm from 2 replicas on" $mode) -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* kvgen.routingValue: routing.picker's FIELD (or scorers' FIELD), else the default; 0 is a value. */}}
{{- define "kvgen.routingValue" -}}
{{- $m := index . 0 -}}{{- $k := index . 1 -}}{{- $default := index . 2 -}}
{{- if include "kvgen.isSet" (list $m $k) -}}{{- int64 (index $m $k) -}}{{- else -}}{{- $default -}}{{- end -}}
{{- end -}}
