# bash completion for cairn(1). `make install` puts it in
# $(PREFIX)/share/bash-completion/completions/cairn. The command list is
# cli/main.c's table (tests/t/t0533-cli-man.sh checks they agree); session
# ids and project names come from `cairn sessions --json`.

_cairn_commands="add recall sessions show export forget stats redact eval model embed reindex mcp import hook setup remember memories vault web sync doctor help"

# The values of one field of `cairn sessions --json` (the store of --db, if given).
_cairn_field()
{
    local db=()
    [ -n "${_cairn_db:-}" ] && db=(--db "$_cairn_db")
    cairn "${db[@]}" sessions --json 2>/dev/null |
        sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" | sort -u
}

_cairn()
{
    local cur prev cmd i _cairn_db=""
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    i=1
    while [ $i -lt $COMP_CWORD ]; do
        case ${COMP_WORDS[i]} in
            --db) _cairn_db=${COMP_WORDS[i+1]}; i=$((i + 2)) ;;
            -*) i=$((i + 1)) ;;
            *) break ;;
        esac
    done
    if [ $i -ge $COMP_CWORD ]; then
        case $prev in
            --db) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        esac
        COMPREPLY=($(compgen -W "$_cairn_commands --db --help --version" -- "$cur"))
        return
    fi
    cmd=${COMP_WORDS[i]}
    case $prev in
        --project) COMPREPLY=($(compgen -W "$(_cairn_field project)" -- "$cur")); return ;;
        --session|--session-exclude) COMPREPLY=($(compgen -W "$(_cairn_field id)" -- "$cur")); return ;;
        --format) COMPREPLY=($(compgen -W "markdown jsonl" -- "$cur")); return ;;
        --method) COMPREPLY=($(compgen -W "cairn raw-bm25 keyword no-time" -- "$cur")); return ;;
        --settings|--out|--md|--svg) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --budget|--now|--from|--to|--limit|--model|--budgets|--label|--server|--batch) return ;;
        --type) [ "$cmd" = remember ] || [ "$cmd" = memories ] &&
                    COMPREPLY=($(compgen -W "fact preference decision procedure correction" -- "$cur"))
                return ;;
        --scope) COMPREPLY=($(compgen -W "$(_cairn_field project)" -- "$cur")); return ;;
        --tag|--replaces|--contradicts|--related|--ttl|--message) return ;;
        --when-keyword|--when-command|--accept|--reject) return ;;
        --when-path) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --severity) COMPREPLY=($(compgen -W "p0 p1 p2" -- "$cur")); return ;;
    esac
    local opts="--help"
    case $cmd in
        add) opts="$opts --quiet"; COMPREPLY=($(compgen -f -- "$cur")) ;;
        recall) opts="$opts --budget --now --project --session-exclude --method --json --explain --fast --batch" ;;
        sessions) opts="$opts --project --limit --json" ;;
        show) opts="$opts --from --to --json"
              [ "${cur#-}" = "$cur" ] && COMPREPLY=($(compgen -W "$(_cairn_field id)" -- "$cur")) ;;
        export) opts="$opts --format --session --project" ;;
        forget) opts="$opts --scrub"
                [ "${cur#-}" = "$cur" ] && COMPREPLY=($(compgen -W "$(_cairn_field id)" -- "$cur")) ;;
        stats) opts="$opts --json" ;;
        sync) opts="$opts --push --pull --project --private --server --batch --quiet" ;;
        redact) opts="$opts --dry-run" ;;
        eval) opts="$opts --budgets --method --out --md --svg --limit --lean --quiet --label --dev"
              [ $((i + 1)) -eq $COMP_CWORD ] &&
                  COMPREPLY=($(compgen -W "locomo beam longmemeval madial sessions compare inject" -- "$cur")) ;;
        model) [ $((i + 1)) -eq $COMP_CWORD ] && COMPREPLY=($(compgen -W "list pull verify rm" -- "$cur")) ;;
        embed) opts="$opts --model --query --backfill --quiet" ;;
        reindex) opts="$opts --quiet" ;;
        import) opts="$opts --full --project --attachments --quiet"
                if [ $((i + 1)) -eq $COMP_CWORD ]; then
                    COMPREPLY=($(compgen -W "claude-code claude-ai chatgpt codex aider jsonl" -- "$cur"))
                else
                    COMPREPLY=($(compgen -f -- "$cur"))
                fi ;;
        hook) [ $((i + 1)) -eq $COMP_CWORD ] &&
                  COMPREPLY=($(compgen -W "stop session-end pre-compact prompt session-start pre-tool" -- "$cur")) ;;
        setup) opts="$opts --dry-run --remove --import --no-import --settings"
               [ $((i + 1)) -eq $COMP_CWORD ] && COMPREPLY=($(compgen -W "claude-code" -- "$cur")) ;;
        remember) opts="$opts --type --scope --tag --replaces --contradicts --related --ttl --session --message --severity --when-keyword --when-path --when-command" ;;
        memories) opts="$opts --scope --type --all --json --accept --reject --severity --when-keyword --when-path --when-command --markdown"
                  if [ $((i + 1)) -eq $COMP_CWORD ]; then
                      COMPREPLY=($(compgen -W "list show edit rm undo export import review stats recognise" -- "$cur"))
                  elif [ "${COMP_WORDS[i+1]}" = import ]; then
                      COMPREPLY=($(compgen -f -- "$cur"))
                  fi ;;
        vault) opts="$opts --name --exclude --json"
               if [ $((i + 1)) -eq $COMP_CWORD ]; then
                   COMPREPLY=($(compgen -W "add list rm reindex" -- "$cur"))
               elif [ "${COMP_WORDS[i+1]}" = add ]; then
                   COMPREPLY=($(compgen -d -- "$cur"))
               fi ;;
        web) opts="$opts --port --open" ;;
        help) [ $((i + 1)) -eq $COMP_CWORD ] && COMPREPLY=($(compgen -W "$_cairn_commands" -- "$cur")) ;;
    esac
    case $cur in
        -*) COMPREPLY=($(compgen -W "$opts" -- "$cur")) ;;
    esac
}
complete -F _cairn cairn
