{{/*
Helpers shared by every template. Object names come from .Values.name when it is set, so that
`helm template` and `kvgen render` give the same objects; otherwise from the release
(kvgen.resolveName).
*/}}

{{/*
kvgen.resolveName: the objects' name, as `helm create`'s fullname makes it: .Values.name when set
(kvgen's own), else fullnameOverride, else the release name when it contains the chart name
(nameOverride replaces the chart name), else <release>-<chart name>. Cut to 52 characters (the
spec's limit for name: room for "-headless" and the pod's revision-hash label; `helm create` cuts
at 63) and trimmed of a final "-"; a name that is still no DNS-1035 label (a release name with a
dot, or starting with a digit) is a problem at "name". Sets $s.V to the values with that name.
Usage: {{- include "kvgen.resolveName" $s -}}
*/}}
{{- define "kvgen.resolveName" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- if not $v.name -}}
{{- $name := $v.fullnameOverride -}}
{{- if not $name -}}
{{- $chart := default $s.release.chart $v.nameOverride -}}
{{- $name = ternary $s.release.name (printf "%s-%s" $s.release.name $chart) (contains $chart $s.release.name) -}}
{{- end -}}
{{- $name = $name | trunc 52 | trimSuffix "-" -}}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $name) -}}
{{- include "kvgen.problem" (list $s "name" (printf "%s, made from the release name, is not a DNS-1035 label (lowercase letters, digits and '-', starting with a letter), which the Service's name must be" (include "kvgen.quoted" $name)) "set name (or fullnameOverride) in the values") -}}
{{- end -}}
{{- $_ := set $s "V" (merge (dict "name" $name) $v) -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.checkRelease: the values against the release, each conflict a problem naming both, never a
silent winner (kvgen: parse_spec and namespace_conflict, with --namespace for the release
namespace): name and fullnameOverride set to two names; the values' namespace and the release
namespace. The release namespace "default" is also what Helm gives without -n (`helm template`),
which it cannot tell apart: there the values' namespace stands.
Usage: {{- include "kvgen.checkRelease" $s -}} (in kvgen.plan, after every other check)
*/}}
{{- define "kvgen.checkRelease" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- if and (kindIs "string" $v.name) (kindIs "string" $v.fullnameOverride) (ne $v.name $v.fullnameOverride) -}}
{{- include "kvgen.problem" (list $s "name" (printf "%s and fullnameOverride %s both name the objects" (include "kvgen.quoted" $v.name) (include "kvgen.quoted" $v.fullnameOverride)) "keep one of them (name is kvgen's, fullnameOverride the Helm convention)") -}}
{{- end -}}
{{- $ns := $s.release.namespace -}}
{{- if and (kindIs "string" $v.namespace) (ne $v.namespace $ns) (ne $ns "default") -}}
{{- include "kvgen.problem" (list $s "namespace" (printf "the spec's namespace %s differs from the namespace it is installed into, %s (helm -n, kvgen --namespace)" (include "kvgen.quoted" $v.namespace) (include "kvgen.quoted" $ns)) (printf "remove namespace from the spec to follow -n, or install with -n %s" $v.namespace)) -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.bytes: a Kubernetes quantity ("10Gi", "1.5T", or a number of bytes) as whole bytes,
rounded up, printed as an integer. The values schema admits only the forms parsed here
(no exponents, no milli-units), the same ones kvgen's spec accepts.
Usage: {{ include "kvgen.bytes" "10Gi" | int64 }}
*/}}
{{- define "kvgen.bytes" -}}
{{- if or (kindIs "float64" .) (kindIs "int64" .) (kindIs "int" .) -}}
{{- int64 . -}}
{{- else -}}
{{- $q := toString . -}}
{{- $num := regexFind "^[0-9]+(\\.[0-9]+)?" $q -}}
{{- $unit := trimPrefix $num $q -}}
{{- $units := dict "" 1.0 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 "k" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 "P" 1000000000000000.0 "E" 1000000000000000000.0 -}}
{{- if not (hasKey $units $unit) -}}
{{- fail (printf "kvgen: %q is not a size such as 10Gi" $q) -}}
{{- end -}}
{{- mulf (float64 $num) (get $units $unit) | ceil | int64 -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.sizeText: a size of the values as kvgen writes it (kvgen/core/quantity.py Size.text): the string
as written, or a whole number of bytes as its digits. Why: Helm reads the values' numbers as float64, so
the number itself would render as an integer where kvgen writes the string the spec wrote.
*/}}
{{- define "kvgen.sizeText" -}}
{{- ternary (toString .) (printf "%d" (int64 .)) (kindIs "string" .) -}}
{{- end -}}

{{/*
kvgen.formatBytes: the shortest exact quantity for a byte count: 10737418240 -> 10Gi,
1610612736 -> 1536Mi; a count that is no whole number of KiB stays in bytes.
*/}}
{{- define "kvgen.formatBytes" -}}
{{- $n := int64 . -}}
{{- $out := toString $n -}}
{{- if gt $n 0 -}}
{{- range $u := list (list "Ti" 1099511627776) (list "Gi" 1073741824) (list "Mi" 1048576) (list "Ki" 1024) -}}
{{- if and (eq $out (toString $n)) (eq (mod $n (index $u 1)) 0) -}}
{{- $out = printf "%d%s" (div $n (index $u 1)) (index $u 0) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $out -}}
{{- end -}}

{{/*
kvgen.quoted: a value the user wrote, as a problem quotes it: Python's repr of a string ('a',
"it's", 'tab\t', 'esc\x1b'): the backslash, the C0 and C1 control characters and DEL escaped (a
terminal reads ESC and CSI as commands), the same as kvgen's core/errors.py quoted(), so both faces
word a problem alike. Usage: {{ include "kvgen.quoted" $value }}
*/}}
{{- define "kvgen.quoted" -}}
{{- $t := toString . | replace "\\" "\\\\" | replace "\n" "\\n" | replace "\r" "\\r" | replace "\t" "\\t" -}}
{{- range $c := concat (until 32) (list 127) (untilStep 128 160 1) -}}
{{- $t = replace (printf "%c" $c) (printf "\\x%02x" $c) $t -}}
{{- end -}}
{{- if and (contains "'" $t) (not (contains "\"" $t)) -}}"{{ $t }}"{{- else -}}'{{ replace "'" "\\'" $t }}'{{- end -}}
{{- end -}}

{{/*
kvgen.number: a float as Go's %v prints it (0.92, 0.5, 1); kvgen prints the same form.
*/}}
{{- define "kvgen.number" -}}
{{- toString (float64 .) -}}
{{- end -}}

{{/*
kvgen.roundUpGiB: bytes rounded up to a whole GiB.
*/}}
{{- define "kvgen.roundUpGiB" -}}
{{- mul (divf (float64 .) 1073741824.0 | ceil | int64) 1073741824 -}}
{{- end -}}

{{/*
kvgen.lmcacheHealthArgs: the launcher's options that find the LMCache MP server's health endpoint:
--http-url=http://host:httpPort and one --health-path=since:path per LMCache version that moved it
(kvgen/data/connector.py lmcache_health_args). A JSON list.
Usage: {{ include "kvgen.lmcacheHealthArgs" $s.W | fromJsonArray }}
*/}}
{{- define "kvgen.lmcacheHealthArgs" -}}
{{- $args := list (printf "--http-url=http://%s:%d" .lmcache.host (int64 .lmcache.httpPort)) -}}
{{- range $p := .lmcache.healthPaths -}}{{- $args = append $args (printf "--health-path=%s:%s" $p.since $p.path) -}}{{- end -}}
{{- toJson $args -}}
{{- end -}}
