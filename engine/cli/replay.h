/* engine/cli/replay.h — `polis replay FILE`: check a recording by re-simulating it, or show
 * a moment of it (replay.c). */
#ifndef POLIS_CLI_REPLAY_H
#define POLIS_CLI_REPLAY_H

int cli_replay_main(int argc, char **argv);
const char *cli_replay_help(void);

#endif
