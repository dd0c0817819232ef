{{/*
kvgen.decide: the capability rules (files/rules.yaml gives codes, order and reasons; the
predicates here mirror kvgen/plan/rules.py). The first rule that matches switches offloading off
and gives the reason; a rule never fails the render.
*/}}
{{- define "kvgen.decide" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $o := $v.kvCacheOffloading -}}
{{- $p := $v.parallelism -}}
{{- $util := "" -}}
{{- if include "kvgen.isSet" (list $o "cpuMemoryUtilization") -}}{{- $util = include "kvgen.number" $o.cpuMemoryUtilization -}}{{- end -}}
{{- $matched := dict
  "disabled-by-config" (or (not $o.enabled) (eq $util "0"))
  "cpu-instance" (eq $s.inst.gpus 0)
  "mig-partition" (ne $s.inst.mig "")
  "data-parallel" (gt (int64 $p.data) 1)
  "multi-node-pipeline-parallel" (and (gt (int64 $p.pipeline) 1) (gt (int64 $p.nodes) 1))
  "prefill-decode-disaggregation" (and (ne $v.disaggregation.role "none") (eq $o.backend "lmcache"))
  "hybrid-architecture" (and $s.model.hybrid (not (and $o.allowHybrid (eq $o.backend "native"))))
-}}
{{- $decision := dict "enabled" true "code" "" "reason" "" -}}
{{- range $rule := ($s.F.Get "files/rules.yaml" | fromYaml).rules -}}
{{- if not (hasKey $matched $rule.code) -}}
{{- fail (printf "kvgen chart: files/rules.yaml has rule %q that templates/plan/_rules.tpl does not know" $rule.code) -}}
{{- end -}}
{{- if and $decision.enabled (index $matched $rule.code) -}}
{{- $_ := set $decision "enabled" false -}}
{{- $_ := set $decision "code" $rule.code -}}
{{- $_ := set $decision "reason" $rule.reason -}}
{{- end -}}
{{- end -}}
{{- $_ := set $s "decision" $decision -}}
{{- $backend := "" -}}
{{- if $decision.enabled -}}{{- $backend = $o.backend -}}{{- end -}}
{{- $_ := set $s "backend" $backend -}}
{{- end -}}
