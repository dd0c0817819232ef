{{/*
kvgen.gpuAccess: how the LMCache server reaches vLLM's GPUs (kvCacheOffloading.lmcache.gpuAccess),
the chart's counterpart of kvgen/plan/gpu_access.py. Sets $s.gpuAccess (mode, summary, requirement
and, for dra, deviceClassName; empty unless the lmcache backend is on) and records a problem
when the Kubernetes version is below the mode's minKubeVersion (files/gpu-access.yaml): .Capabilities.KubeVersion, the cluster's
on install and `--kube-version` for `helm template`.
*/}}
{{- define "kvgen.gpuAccess" -}}
{{- $s := . -}}
{{- $access := dict -}}
{{- if eq $s.backend "lmcache" -}}
{{- $lm := $s.V.kvCacheOffloading.lmcache -}}
{{- $mode := $lm.gpuAccess -}}
{{- $row := index ($s.F.Get "files/gpu-access.yaml" | fromYaml).modes $mode -}}
{{- $access = dict "mode" $mode "summary" $row.summary "requirement" $row.requirement -}}
{{- if eq $mode "dra" -}}{{- $_ := set $access "deviceClassName" $lm.deviceClassName -}}{{- end -}}
{{- with $row.minKubeVersion -}}
{{- if not (semverCompare (printf ">=%s.0-0" .) $s.kube) -}}
{{- include "kvgen.problem" (list $s "kvCacheOffloading.lmcache.gpuAccess" (printf "gpuAccess %s needs Kubernetes %s or newer (%s), but the output is for Kubernetes %s" $mode . $row.minKubeVersionReason (regexFind "[0-9]+\\.[0-9]+" $s.kube)) (printf "for a cluster that has it, set kubeVersion: \"%s\" (or render with --kube-version %s or newer), or use %s" . . $row.minKubeVersionAlternative)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $_ := set $s "gpuAccess" $access -}}
{{- end -}}

{{/* kvgen.gpuAccessEnv: the variables both containers get in the mode in force, as a JSON list
(kvgen/plan/gpu_access.py env; files/gpu-access.yaml modes.MODE.env). */}}
{{- define "kvgen.gpuAccessEnv" -}}
{{- $s := . -}}
{{- $env := list -}}
{{- with $s.gpuAccess.mode -}}
{{- $env = default list (index ($s.F.Get "files/gpu-access.yaml" | fromYaml).modes .).env -}}
{{- end -}}
{{- toJson $env -}}
{{- end -}}

{{/* kvgen.gpuAccessTolerations: the pod's tolerations, as a JSON list: the values' scheduling.tolerations,
then the mode's (files/gpu-access.yaml modes.MODE.tolerations) for each key they do not tolerate already
(kvgen/plan/gpu_access.py tolerations). */}}
{{- define "kvgen.gpuAccessTolerations" -}}
{{- $s := . -}}
{{- $out := default list $s.V.scheduling.tolerations -}}
{{- with $s.gpuAccess.mode -}}
{{- $keys := list -}}
{{- range $t := $out -}}{{- $keys = append $keys (toString $t.key) -}}{{- end -}}
{{- range $t := default list (index ($s.F.Get "files/gpu-access.yaml" | fromYaml).modes .).tolerations -}}
{{- if not (has (toString $t.key) $keys) -}}{{- $out = append $out $t -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}
