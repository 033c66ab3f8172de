/* test_process_init: cairn_process_init turns SQLite's memory statistics
 * off for the process when it comes first, and changes nothing (an error)
 * once SQLite is in use. Its own program: the setting is process-wide and
 * must precede SQLite's initialisation. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "t_open.h"

static char dir[] = "/tmp/cairn-pinit-XXXXXX";

int main(void)
{
    T_EQ_INT(cairn_process_init(), CAIRN_OK);

    struct cairn *db = NULL;
    char path[256];
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof path, "%s/m.db", dir);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    const char *s = "{\"id\":\"s1\",\"messages\":[{\"role\":\"user\",\"content\":\"the memory counter stays off\"}]}";
    T_EQ_INT(cairn_add_json(db, s, strlen(s), NULL), CAIRN_OK);
    /* with the statistics on, the open and the add above counted their
     * allocations (a store's schema alone is ~100 KB); off, nothing is */
    T_EQ_INT(sqlite3_memory_used(), 0);
    cairn_close(db);

    /* SQLite is initialised now: a second call is refused */
    T_EQ_INT(cairn_process_init(), CAIRN_ERROR);
    unlink(path);
    rmdir(dir);
    return T_DONE();
}
