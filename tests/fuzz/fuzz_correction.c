/*
 * fuzz_correction.c: libFuzzer target for the word-level parts of
 * corrections (text/applies.c, text/recognise.c, docs/MEMORIES.md): a
 * correction's applies_when lists matched against a tool call (the Bash
 * command cut into simple commands and words, globs on a path, keywords),
 * and the recogniser of correction-shaped prompts.
 *
 * Input: keywords \0 paths \0 commands \0 Bash command \0 file path \0
 * prompt. Checks: the same answer twice; a correction with no item never
 * applies; a command pattern always matches itself as a command when its
 * first word is a plain word (letters, digits, - _ . /); the recogniser's
 * command patterns are non-empty lines, each no longer than the prompt.
 */
#include <ctype.h>

#include "fuzz.h"
#include "cairn.h"

static int plain_word_start(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s)
        return 0;
    for (; *s && *s != ' ' && *s != '\t'; s++)
        if (!isalnum((unsigned char)*s) && !strchr("-_./", *s))
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_part part[6];
    fuzz_split(data, size, part, 6);
    char *s[6];
    for (int i = 0; i < 6; i++)
        s[i] = fuzz_strdup(part[i]);
    struct cairn_correction c;
    memset(&c, 0, sizeof c);
    c.keywords = s[0];
    c.paths = s[1];
    c.commands = s[2];
    const char *paths[1] = { s[4] };
    struct cairn_tool_call call = { "Bash", s[3], paths, 1 };
    int a = cairn_correction_applies(&c, &call);
    if (a != cairn_correction_applies(&c, &call))
        abort();
    struct cairn_correction none;
    memset(&none, 0, sizeof none);
    none.keywords = none.paths = none.commands = "";
    if (cairn_correction_applies(&none, &call))
        abort();
    /* a single pattern without wildcards or separators matches itself */
    if (!strpbrk(s[2], "\n*?[;&|()`$'\"\\") && plain_word_start(s[2]) &&
        strlen(s[2]) < 1000) {
        struct cairn_correction self;
        memset(&self, 0, sizeof self);
        self.keywords = self.paths = "";
        self.commands = s[2];
        struct cairn_tool_call same = { "Bash", s[2], NULL, 0 };
        if (!cairn_correction_applies(&self, &same))
            abort();
    }
    const char *rule = NULL;
    char *cmds = NULL;
    int r = cairn_correction_recognise(s[5], part[5].n, &rule, &cmds);
    if (r && !rule)
        abort();
    if (cmds) {
        for (char *l = cmds; *l; ) {
            size_t n = strcspn(l, "\n");
            if (!n || n > part[5].n)
                abort();
            l += n;
            if (*l)
                l++;
        }
        free(cmds);
    }
    for (int i = 0; i < 6; i++)
        free(s[i]);
    return 0;
}
