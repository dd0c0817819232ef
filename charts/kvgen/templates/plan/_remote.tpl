{{/*
kvgen.checkRemote: kvCacheOffloading.remote, a Valkey/Redis tier the replicas' LMCache servers share
(LMCache's resp L2 adapter): the lmcache backend's only, a redis:// or valkey:// URL of a host and
an optional port (no TLS, no credentials), a capacity of whole GiB. The chart's counterpart of
kvgen/plan/remote.py check; the URL pattern and default port are wiring.lmcache.remote in files/runtime.yaml.
Usage: {{- include "kvgen.checkRemote" $s -}}
*/}}
{{- define "kvgen.checkRemote" -}}
{{- $s := . -}}
{{- $o := $s.V.kvCacheOffloading -}}
{{- if include "kvgen.isSet" (list $o "remote") -}}
{{- $r := $o.remote -}}
{{- $w := ($s.F.Get "files/runtime.yaml" | fromYaml).wiring.lmcache.remote -}}
{{- if eq $o.backend "native" -}}
{{- include "kvgen.problem" (list $s "kvCacheOffloading.remote" "a remote tier needs the lmcache backend: vLLM's OffloadingConnector (the native backend) has no Valkey/Redis tier" "use backend: lmcache, or share a ReadWriteMany claim across the replicas as a secondary tier: secondary: [{fileSystem: {pvc: {ref: {name: CLAIM}}}}]") -}}
{{- end -}}
{{- $url := $r.url -}}
{{- $urlHint := "write it as redis://HOST:PORT, e.g. redis://valkey.cache.svc.cluster.local:6379" -}}
{{- if or (hasPrefix "rediss://" $url) (hasPrefix "valkeys://" $url) -}}
{{- include "kvgen.problem" (list $s "kvCacheOffloading.remote.url" (printf "%s: TLS is not supported by LMCache 0.5.6's resp adapter (plain RESP only)" (include "kvgen.quoted" $url)) "reach the server over plain RESP inside the cluster (redis://), e.g. a Service restricted by a NetworkPolicy") -}}
{{- else if contains "@" $url -}}
{{- include "kvgen.problem" (list $s "kvCacheOffloading.remote.url" (printf "%s carries credentials; kvgen takes a password from a Secret only" (include "kvgen.quoted" $url)) "remove them from the URL and set remote.username and remote.passwordSecret") -}}
{{- else if not (regexMatch $w.urlPattern $url) -}}
{{- include "kvgen.problem" (list $s "kvCacheOffloading.remote.url" (printf "%s is not a redis:// or valkey:// URL of a host and an optional port (the resp adapter takes no database number, path or query)" (include "kvgen.quoted" $url)) $urlHint) -}}
{{- else -}}
{{- $port := include "kvgen.remotePort" (list $w $url) | int64 -}}
{{- if or (lt $port 1) (gt $port 65535) -}}
{{- include "kvgen.problem" (list $s "kvCacheOffloading.remote.url" (printf "port %d is not a TCP port (1 to 65535)" $port) $urlHint) -}}
{{- end -}}
{{- end -}}
{{- if include "kvgen.isSet" (list $r "capacity") -}}
{{- if lt (include "kvgen.bytes" $r.capacity | int64) 1073741824 -}}
{{- include "kvgen.problem" (list $s "kvCacheOffloading.remote.capacity" (printf "%v is below 1Gi; LMCache counts the tier's capacity in whole GiB (max_capacity_gb)" $r.capacity) "use at least 1Gi, or leave capacity out and let the server's maxmemory-policy evict") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.remotePort: the port of an accepted remote URL (wiring.lmcache.remote.defaultPort without one).
Usage: include "kvgen.remotePort" (list $wiringRemote $url) */}}
{{- define "kvgen.remotePort" -}}
{{- $w := index . 0 -}}{{- $url := index . 1 -}}
{{- $port := regexReplaceAll $w.urlPattern $url "${7}" -}}
{{- if $port -}}{{- atoi $port -}}{{- else -}}{{- int64 $w.defaultPort -}}{{- end -}}
{{- end -}}

{{/*
kvgen.remoteAdapter: the --l2-adapter object of kvCacheOffloading.remote as JSON (kvgen/plan/remote.py
adapter): type resp, host, port, shared, the username; with a capacity, max_capacity_gb and the
L2 eviction block. The password stays in the environment (kvgen.remoteEnv).
Usage: include "kvgen.remoteAdapter" $s (after kvgen.plan accepted the values)
*/}}
{{- define "kvgen.remoteAdapter" -}}
{{- $s := . -}}
{{- $r := $s.V.kvCacheOffloading.remote -}}
{{- $w := $s.W.lmcache.remote -}}
{{- $a := dict "type" $w.adapter "host" (regexReplaceAll $w.urlPattern $r.url "${2}") "port" (include "kvgen.remotePort" (list $w $r.url) | int64) "shared" true -}}
{{- if include "kvgen.isSet" (list $r "username") -}}{{- $_ := set $a "username" $r.username -}}{{- end -}}
{{- if include "kvgen.isSet" (list $r "capacity") -}}
{{- $e := $s.W.lmcache.l2Eviction -}}
{{- $_ := set $a "max_capacity_gb" (div (include "kvgen.bytes" $r.capacity | int64) 1073741824) -}}
{{- $_ := set $a "eviction" (dict "eviction_policy" $e.policy "trigger_watermark" $e.triggerWatermark "eviction_ratio" $e.ratio) -}}
{{- end -}}
{{- toJson $a -}}
{{- end -}}

{{/*
kvgen.remoteEnv: the LMCache server's environment for the remote tier (kvgen/plan/remote.py env): its
password from the Secret, as a JSON list (empty without one).
Usage: include "kvgen.remoteEnv" $s | fromJsonArray
*/}}
{{- define "kvgen.remoteEnv" -}}
{{- $s := . -}}
{{- $out := list -}}
{{- $o := $s.V.kvCacheOffloading -}}
{{- if and (include "kvgen.isSet" (list $o "remote")) (include "kvgen.isSet" (list $o.remote "passwordSecret")) -}}
{{- $ref := $o.remote.passwordSecret -}}
{{- $out = append $out (dict "name" $s.W.lmcache.remote.passwordEnv "valueFrom" (dict "secretKeyRef" (dict "name" $ref.name "key" $ref.key))) -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}
