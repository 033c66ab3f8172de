/*
 * stopwords.c: English and Chinese stop words for text_is_stopword().
 *
 * The ranker drops these from queries ("what did I say about the trip"
 * -> say, trip) because they carry no topic. The table holds the words in
 * the form text_tokenize() emits them, so English words are stored folded
 * and Snowball-stemmed ("because" -> "becaus", "does" -> "doe") and
 * Chinese as the single characters and bigrams the CJK splitter produces
 * (什么, 我们, 的, 了). tests/unit/test_tokenize.c runs the natural-form
 * list through text_tokenize() and checks every result is found here, so
 * a stemmer upgrade that changes a stem shows up as a test failure.
 *
 * English: articles, conjunctions, prepositions, pronouns, auxiliaries,
 * question words, quantifiers, contractions and chat fillers (ok, yeah,
 * hi, thanks). Chinese: function characters (的 了 吗 呢 是 在 ...),
 * pronouns, and function bigrams including filler verbs of recall
 * questions (告诉 知道 记得), which in a bigram index are noise.
 *
 * The array is sorted by bytes (memcmp order) for bsearch.
 */
#include "text/tokenize.h"

#include <stdlib.h>
#include <string.h>

static const char *const stopwords[] = {
    "a", "about", "abov", "after", "again", "all", "alreadi", "also", "am",
    "an", "and", "ani", "anoth", "are", "aren't", "as", "at", "be", "becaus",
    "been", "befor", "below", "between", "both", "but", "by", "can", "can't",
    "cannot", "could", "couldn't", "d", "did", "didn't", "do", "doe",
    "doesn't", "don't", "done", "down", "dure", "each", "either", "els",
    "even", "ever", "everi", "few", "for", "from", "further", "had", "hadn't",
    "has", "hasn't", "have", "haven't", "he", "hello", "her", "here",
    "herself", "hey", "hi", "him", "himself", "his", "how", "howev", "i",
    "i'd", "i'll", "i'm", "i'v", "if", "in", "into", "is", "isn't", "it",
    "itself", "just", "let", "like", "ll", "lot", "m", "mani", "may", "me",
    "might", "mine", "more", "most", "much", "must", "my", "myself",
    "neither", "no", "nor", "not", "of", "off", "oh", "ok", "okay", "on",
    "onc", "one", "onli", "onto", "or", "other", "ought", "our", "ourselv",
    "out", "over", "own", "per", "pleas", "quit", "rather", "re", "realli",
    "s", "same", "shall", "she", "should", "shouldn't", "so", "some", "still",
    "such", "t", "than", "thank", "that", "the", "their", "them", "themselv",
    "then", "there", "these", "they", "they'r", "they'v", "this", "those",
    "through", "to", "too", "uh", "um", "under", "until", "up", "us", "ve",
    "veri", "via", "was", "wasn't", "we", "we'r", "we'v", "well", "were",
    "weren't", "what", "whatev", "when", "whenev", "where", "wherev",
    "whether", "whi", "which", "while", "who", "whoever", "whom", "whose",
    "will", "with", "won't", "would", "wouldn't", "yeah", "yes", "yet", "you",
    "you'd", "you'll", "you'r", "you'v", "your", "yourself", "yourselv", "一",
    "一下", "一个", "一些", "一直", "不", "不会", "不是", "与",
    "且", "个", "为", "为什", "么", "么时", "之", "也", "了", "了什",
    "了吗", "于", "些", "什么", "从", "他", "他们", "他的", "以",
    "以及", "们", "会", "但", "但是", "你", "你们", "你的", "关于",
    "其", "其实", "几个", "却", "又", "及", "只是", "可", "可以",
    "可能", "向", "吗", "吧", "呀", "告诉", "呗", "呢", "和", "咱",
    "咱们", "哦", "哪", "哪个", "哪些", "哪里", "啊", "啥", "嗯",
    "嘛", "因为", "在", "地", "多少", "太", "她", "她们", "她的",
    "如果", "它", "它们", "对", "对于", "就", "就是", "已经",
    "往", "很", "得", "怎么", "怎样", "您", "我", "我们", "我的",
    "或", "或者", "所以", "才", "把", "时候", "是", "是不", "是什",
    "更", "最", "有", "有什", "有没", "此", "每", "没", "没有",
    "然后", "然而", "的", "的时", "的话", "着", "知道", "给",
    "而", "而且", "能", "自己", "虽然", "被", "要", "让", "记得",
    "请问", "谁", "过", "过吗", "还", "还是", "还有", "这", "这个",
    "这些", "这儿", "这样", "这里", "那", "那个", "那些", "那儿",
    "那样", "那里", "都",
};

struct sw_key {
    const char *p;
    size_t n;
};

static int sw_cmp(const void *k, const void *e)
{
    const struct sw_key *key = k;
    const char *w = *(const char *const *)e;
    size_t wn = strlen(w);
    size_t m = key->n < wn ? key->n : wn;
    int c = memcmp(key->p, w, m);
    if (c)
        return c;
    return key->n < wn ? -1 : key->n > wn;
}

int text_is_stopword(const char *tok, size_t n)
{
    struct sw_key key = { tok, n };

    if (!tok || n == 0 || n > 16)
        return 0;
    return bsearch(&key, stopwords, sizeof stopwords / sizeof stopwords[0],
                   sizeof stopwords[0], sw_cmp) != NULL;
}
