/* placeholder, replaced in step 2 */
#include <string.h>
#include "text/correction.h"
#include "util/buf.h"
int corr_recognise(const char *p, size_t n, const char **rule, struct buf *cmds)
{
    (void)p; (void)n; (void)cmds;
    *rule = NULL;
    return 0;
}
