/*
 * Constant-delay line on TUN devices, used as the base-RTT emulator where the
 * kernel has no netem.  Every packet the kernel routes into a TUN device is held
 * for that device's delay and then written back into the same device, from where
 * the kernel forwards it on.  One process serves several devices (one per sender
 * group, so that flows can have different base RTTs).
 *
 * Usage: delayline [--stats FILE] [--live FILE] [--priority P] [--cpu N] NAME:DELAY_US [...]
 *
 * The devices must exist (ip tuntap add dev NAME mode tun).  On SIGTERM/SIGINT the
 * line stops and writes JSON statistics: packets, bytes, drops, the release
 * lateness distribution (time a packet left after its due time), CPU time (in all, and
 * split into user and kernel time: unless --cpu steers them away, a write into the TUN
 * device runs the kernel's forwarding of that packet, and the TCP work it triggers, in
 * this process's kernel time), the CPU it was pinned to and the steering mask (-1 and ""
 * without --cpu), and the scheduling policy obtained.  "ready" is printed on stdout once
 * all devices are attached.
 *
 * With --cpu N the line runs on CPU N only, and the packets it writes back into each device
 * are handed to the other CPUs (receive packet steering: the device's rps_cpus, under
 * /sys/class/net of the network namespace it runs in).  Without it, a write runs the
 * kernel's forwarding of the packet, and everything that packet sets off (an ACK makes
 * its sender transmit), inside the write, on the line's own CPU and before its next
 * release; with it, the write only queues the packet for another CPU.
 *
 * With --live the counters are kept in FILE, mapped shared, so that another process can
 * read them while the line runs (struct live below, native byte order): the magic
 * "CXDLIVE1", packets arrived, packets released, then the lateness histogram (uint32,
 * 1 us bins, the last bin holding everything later).  The histogram is updated before
 * the released count and the arrived count after the packet is queued, so a reader that
 * reads the histogram first and the arrived count last never sees more late packets than
 * the arrived count allows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEV 64
#define SLOT 2048                 /* bytes per stored packet (device MTU is 1500) */
#define HIST_US 100000            /* lateness histogram: 1 us bins up to 100 ms */
#define MAX_SLOTS (1u << 22)      /* hard cap on one device's queue (8 GiB would be absurd) */

struct line {
    char name[IFNAMSIZ];
    int fd;
    uint64_t delay_ns;
    uint8_t *data;                /* ring of SLOT-byte packets */
    uint64_t *due;                /* release time of each slot */
    uint32_t *len;
    uint32_t cap, head, count;    /* cap is a power of two */
    uint64_t packets, bytes, drops, max_queue;
};

struct live {
    char magic[8];                /* "CXDLIVE1" */
    uint64_t arrived, released;   /* packets, over all devices */
    uint64_t reserved;
    uint32_t hist[HIST_US + 1];   /* release lateness, 1 us bins */
};

static volatile sig_atomic_t stop;
static struct live local_counts;
static struct live *lv = &local_counts;
static uint64_t late_max_ns, late_sum_ns;

static void on_signal(int sig) { (void)sig; stop = 1; }

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int open_tun(const char *name) {
    struct ifreq ifr;
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
    if (fd < 0) return -1;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    memcpy(ifr.ifr_name, name, strnlen(name, IFNAMSIZ - 1));
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) { close(fd); return -1; }
    return fd;
}

/* Run on CPU `cpu` only and steer every device's received packets to all other online
 * CPUs; writes the mask into `mask` (rps_cpus format: 32-bit hex words, comma-separated). */
static int steer(int cpu, struct line *lines, int n, char *mask, size_t size) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 2 || ncpu > 1024 || cpu < 0 || cpu >= ncpu) {
        fprintf(stderr, "delayline: --cpu %d needs 2 to 1024 online CPUs and 0 <= N < %ld\n",
                cpu, ncpu);
        errno = EINVAL;
        return -1;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) < 0) return -1;
    size_t off = 0;
    for (long w = (ncpu - 1) / 32; w >= 0; w--) {
        uint32_t word = 0;
        for (int b = 0; b < 32; b++) {
            long c = w * 32 + b;
            if (c < ncpu && c != cpu) word |= 1u << b;
        }
        off += (size_t)snprintf(mask + off, size - off, w ? "%08x," : "%08x", word);
        if (off >= size) { errno = ENAMETOOLONG; return -1; }
    }
    for (int i = 0; i < n; i++) {
        char path[128];
        snprintf(path, sizeof path, "/sys/class/net/%s/queues/rx-0/rps_cpus", lines[i].name);
        FILE *f = fopen(path, "w");
        if (!f) return -1;
        int bad = fputs(mask, f) < 0;
        if (fclose(f) != 0 || bad) return -1;
    }
    return 0;
}

/* Keep the counters in FILE, mapped shared (see the header comment). */
static int map_live(const char *path) {
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    if (ftruncate(fd, (off_t)sizeof(struct live)) < 0) { close(fd); return -1; }
    void *m = mmap(NULL, sizeof(struct live), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return -1;
    lv = m;
    memcpy(lv->magic, "CXDLIVE1", 8);
    return 0;
}

static int grow(struct line *l) {
    uint32_t ncap = l->cap ? l->cap * 2 : 1024;
    if (ncap > MAX_SLOTS) return -1;
    uint8_t *data = malloc((size_t)ncap * SLOT);
    uint64_t *due = malloc((size_t)ncap * sizeof *due);
    uint32_t *len = malloc((size_t)ncap * sizeof *len);
    if (!data || !due || !len) { free(data); free(due); free(len); return -1; }
    for (uint32_t i = 0; i < l->count; i++) {     /* unroll the ring into the new one */
        uint32_t j = (l->head + i) & (l->cap - 1);
        memcpy(data + (size_t)i * SLOT, l->data + (size_t)j * SLOT, l->len[j]);
        due[i] = l->due[j];
        len[i] = l->len[j];
    }
    free(l->data); free(l->due); free(l->len);
    l->data = data; l->due = due; l->len = len; l->cap = ncap; l->head = 0;
    return 0;
}

static void release_due(struct line *l, uint64_t now) {
    while (l->count && l->due[l->head] <= now) {
        uint32_t h = l->head;
        ssize_t w = write(l->fd, l->data + (size_t)h * SLOT, l->len[h]);
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) return;  /* retry next round */
        if (w < 0) l->drops++;
        uint64_t t = now_ns();
        uint64_t late = t > l->due[h] ? t - l->due[h] : 0;
        uint64_t us = late / 1000;
        __atomic_fetch_add(&lv->hist[us > HIST_US ? HIST_US : us], 1, __ATOMIC_RELAXED);
        late_sum_ns += late;
        if (late > late_max_ns) late_max_ns = late;
        __atomic_fetch_add(&lv->released, 1, __ATOMIC_RELEASE);
        l->head = (h + 1) & (l->cap - 1);
        l->count--;
        now = t;
    }
}

static void read_all(struct line *l) {
    for (;;) {
        if (l->count == l->cap && grow(l) < 0) {
            char scratch[SLOT];                        /* queue at its cap: count a drop */
            if (read(l->fd, scratch, sizeof scratch) < 0) return;
            l->drops++;
            continue;
        }
        uint32_t t = (l->head + l->count) & (l->cap - 1);
        ssize_t n = read(l->fd, l->data + (size_t)t * SLOT, SLOT);
        if (n < 0) return;                             /* EAGAIN: drained */
        l->due[t] = now_ns() + l->delay_ns;
        l->len[t] = (uint32_t)n;
        l->count++;
        l->packets++;
        __atomic_fetch_add(&lv->arrived, 1, __ATOMIC_RELEASE);
        l->bytes += (uint64_t)n;
        if (l->count > l->max_queue) l->max_queue = l->count;
    }
}

static double percentile_us(double q) {
    uint64_t released = lv->released;
    if (!released) return 0.0;
    uint64_t want = (uint64_t)(q * (double)released), seen = 0;
    if (want >= released) want = released - 1;
    for (int i = 0; i <= HIST_US; i++) {
        seen += lv->hist[i];
        if (seen > want) return (double)i;
    }
    return (double)HIST_US;
}

static void write_stats(FILE *f, struct line *lines, int n, const char *policy,
                        double wall_s, int cpu, const char *rps) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
    double sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    fprintf(f, "{\n  \"scheduler\": \"%s\",\n  \"wall_s\": %.6f,\n  \"cpu_s\": %.6f,\n"
               "  \"user_s\": %.6f,\n  \"sys_s\": %.6f,\n",
            policy, wall_s, user + sys, user, sys);
    fprintf(f, "  \"cpu\": %d,\n  \"rps_cpus\": \"%s\",\n", cpu, rps);
    uint64_t released = lv->released;
    fprintf(f, "  \"released\": %llu,\n", (unsigned long long)released);
    fprintf(f, "  \"lateness_us\": {\"mean\": %.3f, \"p50\": %.0f, \"p99\": %.0f, "
               "\"p999\": %.0f, \"max\": %.3f},\n",
            released ? late_sum_ns / 1e3 / (double)released : 0.0, percentile_us(0.5),
            percentile_us(0.99), percentile_us(0.999), late_max_ns / 1e3);
    fprintf(f, "  \"devices\": [\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "    {\"name\": \"%s\", \"delay_us\": %.3f, \"packets\": %llu, "
                   "\"bytes\": %llu, \"drops\": %llu, \"max_queue\": %llu, \"queued_at_stop\": %u}%s\n",
                lines[i].name, lines[i].delay_ns / 1e3,
                (unsigned long long)lines[i].packets, (unsigned long long)lines[i].bytes,
                (unsigned long long)lines[i].drops, (unsigned long long)lines[i].max_queue, lines[i].count,
                i + 1 < n ? "," : "");
    fprintf(f, "  ]\n}\n");
}

int main(int argc, char **argv) {
    struct line lines[MAX_DEV];
    struct pollfd pfd[MAX_DEV];
    const char *stats = NULL, *live = NULL;
    int priority = 50, n = 0, cpu = -1;
    char rps[300] = "";
    memset(lines, 0, sizeof lines);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--stats") && i + 1 < argc) { stats = argv[++i]; continue; }
        if (!strcmp(argv[i], "--live") && i + 1 < argc) { live = argv[++i]; continue; }
        if (!strcmp(argv[i], "--priority") && i + 1 < argc) { priority = atoi(argv[++i]); continue; }
        if (!strcmp(argv[i], "--cpu") && i + 1 < argc) {
            char *end;
            long c = strtol(argv[++i], &end, 10);
            if (*end || c < 0 || c > 1023) {
                fprintf(stderr, "delayline: --cpu '%s' must be a CPU number 0..1023\n", argv[i]);
                return 2;
            }
            cpu = (int)c;
            continue;
        }
        char *colon = strrchr(argv[i], ':');
        if (!colon || n == MAX_DEV || colon - argv[i] >= IFNAMSIZ) {
            fprintf(stderr, "delayline: bad argument '%s' (want NAME:DELAY_US)\n", argv[i]);
            return 2;
        }
        char *end;
        double us = strtod(colon + 1, &end);
        if (*end || us < 0 || us > 10e6) {
            fprintf(stderr, "delayline: delay '%s' must be 0..10000000 us\n", colon + 1);
            return 2;
        }
        memcpy(lines[n].name, argv[i], (size_t)(colon - argv[i]));
        lines[n].delay_ns = (uint64_t)(us * 1000.0 + 0.5);
        n++;
    }
    if (!n) { fprintf(stderr, "usage: delayline [--stats FILE] [--live FILE] [--cpu N] NAME:DELAY_US ...\n"); return 2; }

    if (live && map_live(live) < 0) {
        fprintf(stderr, "delayline: cannot map --live %s: %s\n", live, strerror(errno));
        return 1;
    }
    const char *policy = "SCHED_FIFO";
    struct sched_param sp = {.sched_priority = priority};
    if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) policy = "SCHED_OTHER";
    mlockall(MCL_CURRENT | MCL_FUTURE);

    for (int i = 0; i < n; i++) {
        lines[i].fd = open_tun(lines[i].name);
        if (lines[i].fd < 0 || grow(&lines[i]) < 0) {
            fprintf(stderr, "delayline: cannot attach %s: %s\n", lines[i].name, strerror(errno));
            return 1;
        }
        pfd[i].fd = lines[i].fd;
        pfd[i].events = POLLIN;
    }
    if (cpu >= 0 && steer(cpu, lines, n, rps, sizeof rps) < 0) {
        fprintf(stderr, "delayline: cannot steer to CPUs other than %d: %s\n", cpu, strerror(errno));
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    printf("ready\n");
    fflush(stdout);

    uint64_t start = now_ns();
    while (!stop) {
        uint64_t now = now_ns(), next = UINT64_MAX;
        for (int i = 0; i < n; i++) release_due(&lines[i], now);
        for (int i = 0; i < n; i++)
            if (lines[i].count && lines[i].due[lines[i].head] < next) next = lines[i].due[lines[i].head];
        struct timespec ts, *tp = NULL;
        if (next != UINT64_MAX) {
            now = now_ns();
            uint64_t wait = next > now ? next - now : 0;
            ts.tv_sec = (time_t)(wait / 1000000000ull);
            ts.tv_nsec = (long)(wait % 1000000000ull);
            tp = &ts;
        }
        int r = ppoll(pfd, (nfds_t)n, tp, NULL);
        if (r < 0 && errno != EINTR) { perror("delayline: ppoll"); break; }
        if (r > 0)
            for (int i = 0; i < n; i++)
                if (pfd[i].revents & POLLIN) read_all(&lines[i]);
    }
    double wall = (now_ns() - start) / 1e9;
    FILE *f = stats ? fopen(stats, "w") : stdout;
    if (!f) { perror("delayline: stats"); return 1; }
    write_stats(f, lines, n, policy, wall, cpu, rps);
    if (f != stdout) fclose(f);
    return 0;
}
