/*
 * engine/cli/cmd/llm.c — `polis llm ARGS...`: the Python SDK's LLM runner, `python3 -m polis.llm
 * ARGS...` (docs/llm.md), started the way a py: seat starts its process (session/policyproc.h):
 * $POLIS_PYTHON or python3, with the source tree's SDK first on PYTHONPATH when this polis was
 * built from a tree that has one. When $POLIS_LIBRARY is unset and a libpolis.so lies beside
 * the polis program (a build tree), the runner is pointed at it, so it plays the same engine.
 *
 * The arguments go to the runner untouched (its own --help lists them); polis replaces itself
 * with Python, so the exit status, the output and Ctrl-C are the runner's. A Python that
 * cannot be started or that cannot import polis.llm is said in one line, exit status 1.
 */
#define _GNU_SOURCE /* execvpe */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "session/policyproc.h"
#include "util/util.h"

/* Run as `python3 -c BOOT ARGS...`: sys.argv[1:] are the runner's arguments. Its import is
 * checked first, so a missing SDK is one clear line rather than a traceback. */
static const char BOOT[] =
    "import sys\n"
    "try:\n"
    "    from polis.llm.cli import main\n"
    "except ImportError as e:\n"
    "    sys.stderr.write('polis: llm: %s cannot import polis.llm (%s): install the Python SDK '\n"
    "                     '(pip install sdk/python), or put sdk/python on PYTHONPATH, or set '\n"
    "                     'POLIS_PYTHON to a Python that has it\\n' % (sys.executable, e))\n"
    "    sys.exit(1)\n"
    "sys.exit(main())\n";

static int llm_help(cli_args *a)
{
    (void)a;
    cli_command_help(&CLI_CMD_LLM);
    return 0;
}

const cli_command CLI_CMD_LLM = {
    .name = "llm",
    .args = "ARGS...",
    .summary = "LLM agents: python3 -m polis.llm ARGS (run, summary, mock;\n"
               "docs/llm.md)",
    .usage = "llm run SCENARIO... --base-url URL --model NAME [--episodes N] --out DIR\n"
             "       polis llm summary DIR\n"
             "       polis llm mock [--port P]\n"
             "       polis llm --help",
    .about = "Runs the Python SDK's LLM runner, python3 -m polis.llm, with ARGS as they are:\n"
             "LLM scenario files (the Melting Pot study's sets in rulesets/commons/llm/,\n"
             "AdaSociety's LLM-C in sdk/python/polis/llm/scenarios/) played by any\n"
             "OpenAI-compatible model, a recording and a results line (metrics and costs)\n"
             "per episode; summary tables; a mock model for trying it without one.\n"
             "`polis llm --help` and `polis llm run --help` list the runner's options.\n"
             "\n"
             "Python is $POLIS_PYTHON, else python3; the SDK is the source tree's when this\n"
             "polis was built from one, else the installed one (pip install sdk/python).\n"
             "$POLIS_LIBRARY defaults to the libpolis.so beside this program when there is\n"
             "one. The exit status is the runner's: 0 done, 1 a run failed, 2 bad usage;\n"
             "1 too when Python or the SDK cannot be found.\n",
    .run = llm_help,
};

int cli_llm_main(int argc, char **argv)
{
    /* the engine beside this program, unless the user chose one */
    char exe[PATH_MAX], lib[PATH_MAX + 32];
    if (!getenv("POLIS_LIBRARY") && cli_exe_dir(exe) &&
        (size_t)snprintf(lib, sizeof lib, "%s/libpolis.so", exe) < sizeof lib &&
        access(lib, R_OK) == 0)
        setenv("POLIS_LIBRARY", lib, 1);
    const char *py = cli_python();
    char pythonpath[4096 + 16];
    char **envp = cli_python_env(pythonpath, sizeof pythonpath);
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!envp || !args) {
        fprintf(stderr, "polis: out of memory\n");
        free(envp);
        free(args);
        return EXIT_ENV;
    }
    /* python3 -c BOOT ARGS... (argv[0] "polis" and argv[1] "llm" left out) */
    int k = 0;
    args[k++] = (char *)py;
    args[k++] = "-c";
    args[k++] = (char *)BOOT;
    for (int i = 2; i < argc; i++) args[k++] = argv[i];
    args[k] = NULL;
    fflush(stdout);
    execvpe(py, args, envp);
    int e = errno;
    fprintf(stderr,
            "polis: llm: cannot start %s: %s (set POLIS_PYTHON to a Python 3 that has "
            "the polis SDK)\n",
            py, strerror(e));
    free(envp);
    free(args);
    return EXIT_ENV;
}
