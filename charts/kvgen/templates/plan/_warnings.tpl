{{/*
kvgen.warnings: every warning kvgen prints for these values, in its order and its words (kvgen's
Plan.warnings: the sizing's, the context length's, then unused settings and images), which
NOTES.txt prints. Sets $s.warnings.
Usage: {{- include "kvgen.warnings" $s -}} (after kvgen.size)
*/}}
{{- define "kvgen.warnings" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $o := $v.kvCacheOffloading -}}
{{- $out := concat $s.size.warnings $s.context.warnings (include "kvgen.quantizationWarnings" $s | fromJsonArray) -}}
{{/* instance.gpuMemory for a GPU files/instances.yaml gpuModels knows (kvgen/plan/build.py gpu_memory_warning) */}}
{{- if and $s.inst.gpuMemorySet (gt (int64 $s.inst.gpuReported) 0) -}}
{{- $out = append $out (printf "instance.gpuMemory is taken as the marketed size of %s: kvgen plans from the %s it reports to CUDA (files/instances.yaml gpuModels; vLLM's total_memory), not from gpuMemory" $s.inst.gpuModel (include "kvgen.formatBytes" $s.inst.gpuReported)) -}}
{{- end -}}
{{/* settings that apply only to others (files/rules.yaml warnings) */}}
{{- $out = concat $out (include "kvgen.unusedSettings" $s | fromJsonArray) -}}
{{/* a LoadBalancer without the API key vLLM would require (kvgen/plan/build.py has_api_key): service.apiKeySecret, VLLM_API_KEY, or --api-key $(VAR) */}}
{{- $apiKey := not (empty $v.service.apiKeySecret) -}}
{{- range $e := default list $v.vllm.env -}}{{- if eq (toString $e.name) "VLLM_API_KEY" -}}{{- $apiKey = true -}}{{- end -}}{{- end -}}
{{- range $a := default list $v.vllm.extraArgs -}}
{{- $flag := replace "_" "-" (splitn "." 2 (splitn "=" 2 (toString $a))._0)._0 -}}
{{- if eq $flag "--api-key" -}}{{- $apiKey = true -}}{{- end -}}
{{- end -}}
{{- if and (eq $v.service.type "LoadBalancer") (not $apiKey) -}}
{{- $out = append $out "service.type LoadBalancer exposes the OpenAI API outside the cluster without an API key: anyone who reaches it can use the model; set service.apiKeySecret (a Secret vLLM reads as VLLM_API_KEY)" -}}
{{- end -}}
{{/* a LeaderWorkerSet with the LMCache sidecar and weights downloaded into the emptyDir (kvgen/plan/build.py lws_sidecar_restart_warning) */}}
{{- if and (gt (int64 $v.parallelism.nodes) 1) (eq $v.multiNode.engine "leaderworkerset") $s.gpuAccess (ne $s.gpuAccess.mode "in-container") (not $v.model.uri) (not (kindIs "map" $v.model.cache)) -}}
{{- $out = append $out (printf "multiNode.engine leaderworkerset recreates the whole group when any container restarts, the LMCache sidecar included (restartPolicy %s; LWS v0.10 counts init containers' restarts), and every pod of it downloads the weights again into its emptyDir model cache; keep them on a claim (model.uri pvc://...)" ($s.F.Get "files/runtime.yaml" | fromYaml).wiring.lws.restartPolicy) -}}
{{- end -}}
{{/* model.cache.claim mounted by more than one pod (kvgen/plan/model_source.py warnings) */}}
{{- with $v.model.cache -}}{{- if include "kvgen.isSet" (list . "claim") -}}
{{- $pods := mul (ternary (int64 (default dict $v.autoscaling).maxReplicas) (int64 $v.replicas) (not (empty $v.autoscaling))) (int64 $v.parallelism.nodes) -}}
{{- if gt $pods 1 -}}
{{- $out = append $out (printf "model.cache.claim %s is mounted by up to %d pods: it must be ReadWriteMany (kvgen cannot read the claim; a ReadWriteOnce claim keeps the pods on other nodes Pending), and every pod that starts while the files are missing downloads them too" .claim.name $pods) -}}
{{- end -}}
{{- end -}}{{- end -}}
{{/* LoRA whose memory kvgen cannot size (kvgen/plan/lora.py warnings) */}}
{{- $out = concat $out (include "kvgen.loraWarnings" $s | fromJsonArray) -}}
{{/* a shared tier and a model vLLM downloads by id at a --revision (kvgen/plan/build.py shared_tier_revision_warning) */}}
{{- $rev := include "kvgen.extraArg" (list $v (list "--revision")) -}}
{{- if and $s.decision.enabled (eq $o.backend "lmcache") (include "kvgen.isSet" (list $o "remote")) (not $v.model.uri) (not $v.model.cache) $rev -}}
{{- $out = append $out (printf "kvCacheOffloading.remote: LMCache keys the shared tier by the model vLLM serves (%s), not by its revision (%s): another revision of it on the same server would read these entries; serve it from model.cache, whose directory names the revision" (toString $v.model.id) $rev) -}}
{{- end -}}
{{/* a gated model without a Hugging Face token (kvgen/plan/build.py gated_warning; files/models.yaml gated:) */}}
{{- $token := not (empty $v.model.hfTokenSecret) -}}
{{- range $e := default list $v.vllm.env -}}{{- if has (toString $e.name) (list "HF_TOKEN" "HUGGING_FACE_HUB_TOKEN") -}}{{- $token = true -}}{{- end -}}{{- end -}}
{{- if not $token -}}
{{- $gated := false -}}
{{- range $g := default list ($s.F.Get "files/models.yaml" | fromYaml).gated -}}{{- if regexMatch $g.pattern (toString $v.model.id) -}}{{- $gated = true -}}{{- end -}}{{- end -}}
{{- if $gated -}}
{{- $out = append $out (printf "%s is gated on Hugging Face and model.hfTokenSecret is not set: vLLM cannot download it without a token of an account that accepted the model's terms; set model.hfTokenSecret to a Secret holding one" (toString $v.model.id)) -}}
{{- end -}}
{{- end -}}
{{/* settings the GPU access mode in force does not use (kvgen/plan/gpu_access.py warnings) */}}
{{- $access := $s.gpuAccess -}}
{{- $server := $v.resources.lmcacheServer -}}
{{- if and $access (eq $access.mode "in-container") (or (include "kvgen.isSet" (list $server.requests "cpu")) (include "kvgen.isSet" (list $server.limits "cpu"))) -}}
{{- $out = append $out "resources.lmcacheServer cpu is not used with gpuAccess in-container: the server shares the vLLM container's CPU (its memory and ephemeral storage are added to that container)" -}}
{{- end -}}
{{/* images.lmcache (kvgen/plan/images.py warnings) */}}
{{- $own := default dict $v.images.lmcache -}}
{{- if and $access (or $own.repository $own.tag $own.digest $own.pullPolicy) -}}
{{- $rt := $s.F.Get "files/runtime.yaml" | fromYaml -}}
{{- $registry := include "kvgen.imageRegistry" $v -}}
{{/* a server's pod (lmcache backend, GPU node) runs kvgen's runtime image by default (kvgen.images) */}}
{{- $runtime := include "kvgen.runtimePin" $s | fromJson -}}
{{- $client := include "kvgen.relocate" (list (include "kvgen.image" (list (default dict $v.images.vllm) $runtime)) $registry) -}}
{{- if eq $access.mode "in-container" -}}
{{- $out = append $out (printf "images.lmcache is not used with gpuAccess in-container: the LMCache server runs inside the vLLM container (%s)" $client) -}}
{{- else -}}
{{- $serverImage := include "kvgen.relocate" (list (include "kvgen.lmcacheImage" (list $own (default dict $v.images.vllm) $runtime)) $registry) -}}
{{- if ne $serverImage $client -}}
{{- $out = append $out (printf "images.lmcache: the LMCache server runs from %s, the LMCacheMPConnector (the client) from the vLLM image %s; LMCache's MP protocol has no version handshake, so both images must carry the same LMCache version (%s), or requests fail at run time with a client/server version mismatch" $serverImage $client (toString $rt.lmcache.version)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{/* tiers the values set that a capability rule drops (kvgen/plan/build.py dropped_tiers_warning) */}}
{{- if and (not $s.decision.enabled) (ne $s.decision.code "disabled-by-config") -}}
{{- $fields := list -}}
{{- range $k := list "cpu" "cpuMemoryUtilization" "secondary" "remote" -}}
{{- if or (and (ne $k "secondary") (include "kvgen.isSet" (list $o $k))) (and (eq $k "secondary") (not (empty $o.secondary))) -}}
{{- $fields = append $fields (printf "kvCacheOffloading.%s" $k) -}}
{{- end -}}
{{- end -}}
{{- if $fields -}}
{{- $text := printf "%s %s dropped: KV-cache offloading is off (rule %s: %s)" (join ", " $fields) (ternary "is" "are" (eq (len $fields) 1)) $s.decision.code $s.decision.reason -}}
{{- if eq $s.decision.code "cpu-instance" -}}
{{- $text = printf "%s, sized by VLLM_CPU_KVCACHE_SPACE=%d GiB" $text (int64 ($s.F.Get "files/sizing.yaml" | fromYaml).vllm.cpuBackendKvSpaceGiB) -}}
{{- end -}}
{{- $out = append $out $text -}}
{{- end -}}
{{- end -}}
{{/* images.vllm on a node without a GPU, which runs vLLM's CPU build (kvgen/plan/images.py cpu_warnings) */}}
{{- if eq (int64 $s.inst.gpus) 0 -}}
{{- $rt := $s.F.Get "files/runtime.yaml" | fromYaml -}}
{{- $own := include "kvgen.image" (list (default dict $v.images.vllm) $rt.vllm.image) -}}
{{- if ne $own (include "kvgen.image" (list dict $rt.vllm.image)) -}}
{{- $cpu := include "kvgen.relocate" (list (include "kvgen.image" (list (default dict $v.images.vllmCpu) (index $rt.vllm.cpuImage $s.inst.arch))) (include "kvgen.imageRegistry" $v)) -}}
{{- $out = append $out (printf "images.vllm (%s) is not used on a node without a GPU: vLLM runs from its CPU build %s (images.vllmCpu chooses it)" $own $cpu) -}}
{{- end -}}
{{- if (default dict $v.images.vllm).pullPolicy -}}
{{- $cpu := include "kvgen.relocate" (list (include "kvgen.image" (list (default dict $v.images.vllmCpu) (index $rt.vllm.cpuImage $s.inst.arch))) (include "kvgen.imageRegistry" $v)) -}}
{{- $out = append $out (printf "images.vllm.pullPolicy is not used on a node without a GPU: vLLM runs from its CPU build %s (images.vllmCpu.pullPolicy sets its pull policy)" $cpu) -}}
{{- end -}}
{{- end -}}
{{/* extraObjects of a kind kvgen has no schema for (kvgen/plan/extra_objects.py warnings) */}}
{{- $out = concat $out (include "kvgen.extraObjectWarnings" $s | fromJsonArray) -}}
{{- $out = concat $out (include "kvgen.routingWarnings" $s | fromJsonArray) -}}
{{- $_ := set $s "warnings" $out -}}
{{- end -}}

{{/*
kvgen.unusedSettings: the warnings of files/rules.yaml `warnings`, in order, each when its condition holds
(kvgen.holds over the facts spec, model, instance and gpuAccess), {fact.path} in its words replaced by that
field's value (kvgen/plan/rules.py unused_settings). A JSON list.
Usage: {{- $warnings := include "kvgen.unusedSettings" $s | fromJsonArray -}}
*/}}
{{- define "kvgen.unusedSettings" -}}
{{- $s := . -}}
{{- $facts := dict "spec" $s.V "model" $s.model "instance" $s.inst "gpuAccess" $s.gpuAccess -}}
{{- $out := list -}}
{{- range $row := ($s.F.Get "files/rules.yaml" | fromYaml).warnings -}}
{{- if include "kvgen.holds" (list $row.when $facts) -}}
{{- $text := $row.message -}}
{{- range $ph := regexFindAll "\\{[A-Za-z][A-Za-z0-9_]*(\\.[A-Za-z0-9_]+)+\\}" $row.message -1 -}}
{{- $x := $facts -}}
{{- range $k := splitList "." (trimSuffix "}" (trimPrefix "{" $ph)) -}}{{- if kindIs "map" $x -}}{{- $x = index $x $k -}}{{- else -}}{{- $x = index dict "unset" -}}{{- end -}}{{- end -}}
{{- $text = replace $ph (toString $x) $text -}}
{{- end -}}
{{- $out = append $out $text -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}
