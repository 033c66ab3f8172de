/*
 * test_first_person.c: query_first_person (issue 16, persp55), the
 * question in the words of the speaker it names.
 */
#include "t.h"
#include "recall/recall.h"
#include "util/buf.h"

/* text rewritten for name: the result, or "-" when nothing was rewritten */
static char got[512];

static const char *fp(const char *text, const char *name)
{
    struct buf b = BUF_INIT;
    int rc = query_first_person(text, strlen(text), name, &b);
    snprintf(got, sizeof got, "%s", rc > 0 ? b.p : rc == 0 ? "-" : "(nomem)");
    buf_release(&b);
    return got;
}

static void test_rewrites(void)
{
    T_EQ_STR(fp("What pets does Melanie have?", "Melanie"), "pets I have");
    T_EQ_STR(fp("What did Caroline paint recently?", "Caroline"), "I paint recently");
    T_EQ_STR(fp("Where has Melanie camped?", "Melanie"), "I camped");
    T_EQ_STR(fp("What is Caroline's identity?", "Caroline"), "my identity");
    /* her / his / she / he are the named person's */
    T_EQ_STR(fp("What does Melanie do with her family?", "Melanie"), "I do with my family");
    T_EQ_STR(fp("Why did Jon feel he had to quit?", "Jon"), "I feel I had to quit");
    /* a name of two words, either word; case-folded */
    T_EQ_STR(fp("when did smith move?", "Anna Smith"), "I move");
    /* the auxiliary only right before the name */
    T_EQ_STR(fp("Would Caroline still want to be a counselor?", "Caroline"),
             "I still want to be a counselor");
    T_EQ_STR(fp("Is it true that Gina is tired?", "Gina"), "Is it true that I is tired");
}

static void test_no_rewrite(void)
{
    /* the name absent, part of a longer word, or no name at all */
    T_EQ_STR(fp("What pets does Melanie have?", "Caroline"), "-");
    T_EQ_STR(fp("What did Melanies paint?", "Melanie"), "-");
    T_EQ_STR(fp("What did she paint?", ""), "-");
    T_EQ_STR(fp("What did she paint?", NULL), "-");
    T_EQ_STR(fp("", "Melanie"), "-");
    /* a one-letter name matches nothing */
    T_EQ_STR(fp("What did J do?", "J"), "-");
    /* a pasted text (more than RECALL_FP_WORDS words) is not a question */
    char big[4096] = "Melanie";
    for (int i = 0; i < RECALL_FP_WORDS; i++)
        strcat(big, " word");
    T_EQ_STR(fp(big, "Melanie"), "-");
    big[strlen(big) - 5] = '\0';    /* RECALL_FP_WORDS words: rewritten */
    T_CHECK(strncmp(fp(big, "Melanie"), "I word", 6) == 0);
}

/* Hostile input: bytes over 0x7f, lone apostrophes and hyphens, a name with
 * no letters; the result holds only the input's words and the rewrites. */
static void test_odd_input(void)
{
    T_EQ_STR(fp("Was hat Jürgen gemacht?", "Jürgen"), "Was hat I gemacht");
    T_EQ_STR(fp("'-' Melanie's - '", "Melanie"), "my");
    T_EQ_STR(fp("What did Melanie do?", "!!"), "-");
    uint64_t s = 16;
    for (int r = 0; r < 2000; r++) {
        char text[64];
        int n = (int)(t_xorshift(&s) % 63);
        static const char alpha[] = "Ab '-?\x80\xc3 Melanie's";
        for (int i = 0; i < n; i++)
            text[i] = alpha[t_xorshift(&s) % (sizeof alpha - 1)];
        text[n] = '\0';
        struct buf b = BUF_INIT;
        int rc = query_first_person(text, (size_t)n, "Melanie", &b);
        T_CHECK(rc == 0 || (rc == 1 && b.n > 0 && b.n <= 2 * (size_t)n));
        buf_release(&b);
    }
}

int main(void)
{
    T_RUN(test_rewrites);
    T_RUN(test_no_rewrite);
    T_RUN(test_odd_input);
    return T_DONE();
}
