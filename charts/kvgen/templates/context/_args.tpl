{{/* The layout (kvgen.layout, _context.tpl), its pieces: `vllm serve`'s arguments and the vLLM container's environment. Read by kvgen translated (tools/gotemplate.py). */}}
{{/*
kvgen.context.vllmArgs: `vllm serve`'s arguments (the image's entrypoint; the model is its
positional argument). Sets $s.vllmArgs: head and tail; ranks 1.. of a multi-node server add
--headless between them.
Usage: {{- include "kvgen.context.vllmArgs" $s -}}
*/}}
{{- define "kvgen.context.vllmArgs" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $p := $v.parallelism -}}
{{- $o := $v.kvCacheOffloading -}}
{{/* a decode server in routing.mode gateway: vLLM behind the routing sidecar, on the sidecar's --vllm-port */}}
{{- $port := int64 $v.service.port -}}
{{- if and (eq (toString $v.disaggregation.role) "decode") (eq (default "none" (default dict $v.routing).mode) "gateway") -}}{{- $port = int64 $s.rt.picker.sidecar.vllmPort -}}{{- end -}}
{{- $_ := set $s "vllmPort" $port -}}
{{- $head := list $v.model.id (printf "--port=%d" $port) (printf "--tensor-parallel-size=%d" (int64 $p.tensor)) -}}
{{/* model.uri: vLLM serves the mounted directory, under the model's id */}}
{{- if $s.plan.weights.local -}}
{{- $named := false -}}
{{- range $a := default list $v.vllm.extraArgs -}}{{- if regexMatch "^--served[-_]model[-_]name(=|$)" $a -}}{{- $named = true -}}{{- end -}}{{- end -}}
{{- $head = concat (list $s.plan.weights.dir) (ternary list (list (printf "--served-model-name=%s" $v.model.id)) $named) (rest $head) -}}
{{- end -}}
{{- if gt (int64 $p.pipeline) 1 -}}{{- $head = append $head (printf "--pipeline-parallel-size=%d" (int64 $p.pipeline)) -}}{{- end -}}
{{- if gt (int64 $p.data) 1 -}}{{- $head = append $head (printf "--data-parallel-size=%d" (int64 $p.data)) -}}{{- end -}}
{{- if and (gt (int64 $p.nodes) 1) (eq $v.multiNode.engine "leaderworkerset") -}}
{{/* the LWS controller gives every container the group's leader and the pod's index */}}
{{- $head = concat $head (list (printf "--nnodes=%d" (int64 $p.nodes)) (printf "--node-rank=$(%s)" $s.W.lws.workerIndexEnv) (printf "--master-addr=$(%s)" $s.W.lws.leaderAddressEnv) (printf "--master-port=%d" (int64 $s.W.masterPort))) -}}
{{- else if gt (int64 $p.nodes) 1 -}}
{{- $head = concat $head (list (printf "--nnodes=%d" (int64 $p.nodes)) "--node-rank=$(NODE_RANK)" (printf "--master-addr=%s-0.%s-headless" $v.name $v.name) (printf "--master-port=%d" (int64 $s.W.masterPort))) -}}
{{- end -}}
{{- $tail := list -}}
{{/* the spec's model.maxModelLen, or the longest length that fits (kvgen.contextLength) */}}
{{- with $s.plan.contextLength.flag -}}{{- $tail = append $tail (printf "--max-model-len=%d" (int64 .)) -}}{{- end -}}
{{- if gt (int64 $s.plan.instance.gpus) 0 -}}{{- $tail = append $tail (printf "--gpu-memory-utilization=%s" (include "kvgen.number" $v.vllm.gpuMemoryUtilization)) -}}{{- end -}}
{{- $kv := dict -}}
{{- if eq $s.backend "lmcache" -}}
{{- $extra := dict "lmcache.mp.host" (printf "tcp://%s" $s.W.lmcache.host) "lmcache.mp.port" $s.W.lmcache.port -}}
{{/* a server spanning several nodes: one LMCache server per node, every node's pod named in node-rank
     order */}}
{{- if gt (int64 $p.nodes) 1 -}}
{{- $urls := list -}}
{{- range $rank := until (int $p.nodes) -}}
{{- $host := "" -}}
{{- if eq $v.multiNode.engine "leaderworkerset" -}}
{{- $host = printf "%s-$(%s)" $v.name $s.W.lws.groupIndexEnv -}}
{{- if gt $rank 0 -}}{{- $host = printf "%s-%d" $host $rank -}}{{- end -}}
{{- $host = printf "%s.%s" $host $v.name -}}
{{- else if eq $rank 0 -}}
{{- $host = printf "%s-0.%s-headless" $v.name $v.name -}}
{{- else -}}
{{- $host = printf "%s-worker-%d.%s-headless" $v.name $rank $v.name -}}
{{- end -}}
{{- $urls = append $urls (printf "tcp://%s:%d" $host (int64 $s.W.lmcache.port)) -}}
{{- end -}}
{{- $extra = dict "lmcache.mp.server_urls" $urls -}}
{{- end -}}
{{- $kv = dict "kv_connector" $s.rt.connectors.lmcache "kv_role" "kv_both" "kv_connector_extra_config" $extra -}}
{{- else if eq $s.backend "native" -}}
{{- $count := len $o.secondary -}}
{{- $specName := ternary "TieringOffloadingSpec" "CPUOffloadingSpec" (gt $count 0) -}}
{{- if include "kvgen.isSet" (list $o "specName") -}}{{- $specName = $o.specName -}}{{- end -}}
{{- $extra := dict "cpu_bytes_to_use" (int64 $s.plan.sizes.cpuTier) "eviction_policy" $o.evictionPolicy "spec_name" $specName -}}
{{- if gt $count 0 -}}
{{- $tiers := list -}}
{{- range $n := until $count -}}{{- $tiers = append $tiers (dict "type" "fs" "root_dir" (printf "%s%d" $s.W.tierMountPrefix $n)) -}}{{- end -}}
{{- $_ := set $extra "secondary_tiers" $tiers -}}
{{- end -}}
{{- $kv = dict "kv_connector" $s.rt.connectors.native "kv_role" "kv_both" "kv_connector_extra_config" $extra -}}
{{/* prefill/decode: NIXL hands the KV over, the OffloadingConnector keeps its tiers */}}
{{- if ne $v.disaggregation.role "none" -}}
{{- $nixl := dict "kv_connector" $s.rt.connectors.disaggregation "kv_role" "kv_both" -}}
{{- $kv = dict "kv_connector" $s.rt.connectors.multi "kv_role" "kv_both" "kv_load_failure_policy" $s.rt.kvLoadFailurePolicy "kv_connector_extra_config" (dict "connectors" (list $nixl $kv)) -}}
{{- end -}}
{{- else if ne $v.disaggregation.role "none" -}}
{{- $kv = dict "kv_connector" $s.rt.connectors.disaggregation "kv_role" "kv_both" "kv_load_failure_policy" $s.rt.kvLoadFailurePolicy -}}
{{- end -}}
{{- if $kv -}}{{- $tail = append $tail (printf "--kv-transfer-config=%s" (toJson $kv)) -}}{{- end -}}
{{- if and (eq $s.backend "native") $s.plan.model.hybrid -}}{{- $tail = append $tail "--enable-prefix-caching" -}}{{- end -}}
{{/* model.lora: the LoRA limits and every adapter in one --lora-modules (kvgen.planLora) */}}
{{- with $s.plan.lora -}}{{- $tail = concat $tail .args -}}{{- end -}}
{{/* vllm.extraArgs as vLLM gets them (model.cache: without --revision, which the download takes) */}}
{{- $tail = concat $tail $s.plan.weights.extraArgs -}}
{{- $_ := set $s "vllmArgs" (dict "head" $head "tail" $tail) -}}
{{- end -}}

{{/*
kvgen.context.env: the vLLM container's environment: kvgen's variables, then the values'.
Sets $s.env (a list, maybe empty).
Usage: {{- include "kvgen.context.env" $s -}}
*/}}
{{- define "kvgen.context.env" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $env := list -}}
{{- if and (gt (int64 $v.parallelism.nodes) 1) (ne $v.multiNode.engine "leaderworkerset") -}}{{- $env = append $env (dict "name" "NODE_RANK" "valueFrom" (dict "fieldRef" (dict "fieldPath" (printf "metadata.labels['%s']" $s.W.labels.podIndex)))) -}}{{- end -}}
{{/* the group's index names its pods in lmcache.mp.server_urls (kvgen.context.vllmArgs) */}}
{{- if and (gt (int64 $v.parallelism.nodes) 1) (eq $v.multiNode.engine "leaderworkerset") (eq $s.backend "lmcache") -}}{{- $env = append $env (dict "name" $s.W.lws.groupIndexEnv "valueFrom" (dict "fieldRef" (dict "fieldPath" (printf "metadata.labels['%s']" $s.W.lws.groupIndexLabel)))) -}}{{- end -}}
{{- with $v.model.hfTokenSecret -}}
{{- $ref := dict "name" .name "key" .key -}}
{{- if include "kvgen.isSet" (list . "optional") -}}{{- $_ := set $ref "optional" .optional -}}{{- end -}}
{{- $env = append $env (dict "name" "HF_TOKEN" "valueFrom" (dict "secretKeyRef" $ref)) -}}
{{- end -}}
{{- with $v.service.apiKeySecret -}}{{- $env = append $env (dict "name" "VLLM_API_KEY" "valueFrom" (dict "secretKeyRef" (dict "name" .name "key" .key))) -}}{{- end -}}
{{- if ne $v.disaggregation.role "none" -}}{{- $env = append $env (dict "name" "VLLM_NIXL_SIDE_CHANNEL_HOST" "valueFrom" (dict "fieldRef" (dict "fieldPath" "status.podIP"))) -}}{{- end -}}
{{/* the weights are on the claim: never ask the Hub (air-gapped clusters) */}}
{{- if $s.plan.weights.local -}}{{- $env = append $env (dict "name" "HF_HUB_OFFLINE" "value" "1") -}}{{- end -}}
{{- if eq (int64 $s.plan.instance.gpus) 0 -}}{{- $env = append $env (dict "name" "VLLM_CPU_KVCACHE_SPACE" "value" (toString (int64 $s.C.vllm.cpuBackendKvSpaceGiB))) -}}{{- end -}}
{{/* dra: only the claimed GPUs (the plan's gpuAccess.env) */}}
{{- $env = concat $env (default list $s.gpuAccess.env) -}}
{{- range $e := default list $v.vllm.env -}}{{- $env = append $env $e -}}{{- end -}}
{{- $_ := set $s "env" $env -}}
{{- end -}}
