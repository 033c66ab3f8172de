/* cmd_eval.c: the evaluation harness lands in the next commit. */
#include "cli.h"
int cmd_eval(int argc, char **argv, struct cli_ctx *ctx) { (void)argc; (void)argv; (void)ctx; return 1; }
