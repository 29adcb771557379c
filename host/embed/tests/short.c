/* The C ABI as an app uses it: open an assistant over a recorded morning (replayed clock),
 * push its signals, answer the question a decision asks by its id, end the input, close.
 * Usage: short CONFIG_JSON READING INVITATION READING_AGAIN ANSWER_AT
 * Prints each acknowledgement, the question's id and the summary; exits 0 when every step
 * went as the ABI says. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aura.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char question[64];
static int decisions;

/* Called on the library's thread: keeps the id of the first question asked. */
static void on_decision(void *user, const char *json) {
    (void)user;
    pthread_mutex_lock(&lock);
    decisions++;
    const char *found = strstr(json, "\"question\":\"");
    if (found && question[0] == '\0') {
        found += strlen("\"question\":\"");
        size_t n = strcspn(found, "\"");
        if (n < sizeof question) {
            memcpy(question, found, n);
            question[n] = '\0';
        }
    }
    pthread_mutex_unlock(&lock);
}

static int push(AuraAssistant *assistant, const char *signal) {
    char *reply = NULL;
    int status = aura_push(assistant, signal, &reply);
    printf("push %d %s\n", status, reply ? reply : "(null)");
    aura_string_free(reply);
    return status;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s CONFIG READING INVITATION READING_AGAIN ANSWER_AT\n", argv[0]);
        return 2;
    }
    char *error = NULL;
    AuraAssistant *assistant = aura_open(argv[1], on_decision, NULL, &error);
    if (!assistant) {
        fprintf(stderr, "open: %s\n", error ? error : "(null)");
        aura_string_free(error);
        return 1;
    }
    /* A refusal is a status, not a crash. */
    if (push(assistant, "not json") != 1) return 1;
    if (push(assistant, argv[2]) != 0 || push(assistant, argv[3]) != 0 || push(assistant, argv[4]) != 0) return 1;
    /* The tick of 08:45 runs once the clock passed it; its question reaches the callback. */
    for (int waited = 0; waited < 600; waited++) {
        pthread_mutex_lock(&lock);
        int asked = question[0] != '\0';
        pthread_mutex_unlock(&lock);
        if (asked) break;
        usleep(100 * 1000);
    }
    pthread_mutex_lock(&lock);
    printf("question %s\n", question);
    pthread_mutex_unlock(&lock);
    if (question[0] == '\0') return 1;
    char signal[256];
    snprintf(signal, sizeof signal,
             "{\"at\":\"%s\",\"kind\":\"answer\",\"data\":{\"question\":\"%s\",\"reply\":\"yes\"}}",
             argv[5], question);
    if (push(assistant, signal) != 0) return 1;
    char *reply = NULL;
    if (aura_answer(assistant, "t_0000000000", "no", &reply) != 1) return 1;
    printf("answer %s\n", reply);
    aura_string_free(reply);
    if (aura_end_input(assistant) != 0) return 1;
    char *summary = NULL;
    int closed = aura_close(assistant, 1, &summary);
    printf("close %d %s\n", closed, summary ? summary : "(null)");
    aura_string_free(summary);
    pthread_mutex_lock(&lock);
    printf("decisions %d\n", decisions);
    pthread_mutex_unlock(&lock);
    /* Misuse is a status too. */
    if (aura_push(NULL, "{}", NULL) != -1) return 1;
    return closed == 0 ? 0 : 1;
}
