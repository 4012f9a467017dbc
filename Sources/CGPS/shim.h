// What Swift cannot take from <gps.h> directly (gpsd 3.22, libgps API 11): gps_stream's flags
// are macros of unsigned expressions, the *_SET masks are 64-bit shifts, and gps_data_t holds
// large unions. Swift sees an opaque handle and one flat struct per report; only WaymarkGPSD
// imports this module.
#ifndef CGPS_SHIM_H
#define CGPS_SHIM_H

#include <gps.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/// One report of gpsd, flattened: NaN where gpsd left a value out.
typedef struct {
    int mode;          // MODE_NOT_SEEN 0, MODE_NO_FIX 1, MODE_2D 2, MODE_3D 3
    int status;        // STATUS_* (0 none, 1 fix, 2 DGPS, 3 RTK fixed, 4 RTK float, …)
    bool has_time;
    long long time_sec;
    long time_nsec;
    double latitude, longitude;
    double alt_hae, alt_msl;
    double eph, epx, epy, epv;
    double speed, eps, track, epd, climb;
    double geoid_sep;
    int satellites_used;   // from the last SKY; -1 when none seen
    double hdop, vdop, pdop;
    char device[256];
} cgps_report;

/// A gps_data_t on the heap, zeroed; free it with cgps_destroy.
static inline void *cgps_create(void) { return calloc(1, sizeof(struct gps_data_t)); }
static inline void cgps_destroy(void *data) { free(data); }

/// gps_open(host, port, data): 0 or -1 with errno set (gps_errstr explains it).
static inline int cgps_open(const char *host, const char *port, void *data) {
    return gps_open(host, port, (struct gps_data_t *)data);
}

/// gps_stream(WATCH_ENABLE | WATCH_JSON), for one device (WATCH_DEVICE) when `device` is not NULL.
static inline int cgps_watch(void *data, const char *device) {
    unsigned int flags = WATCH_ENABLE | WATCH_JSON;
    if (device != NULL) flags |= WATCH_DEVICE;
    return gps_stream((struct gps_data_t *)data, flags, (void *)device);
}

/// gps_stream(WATCH_DISABLE).
static inline int cgps_unwatch(void *data) { return gps_stream((struct gps_data_t *)data, WATCH_DISABLE, NULL); }

/// The socket to gpsd. Waymark reads it itself, a line at a time, rather than through gps_read:
/// libgps's gps_waiting says "ready" for as long as part of a line is buffered, and a line
/// longer than its buffer makes every later gps_read fail.
static inline int cgps_fd(const void *data) { return ((const struct gps_data_t *)data)->gps_fd; }

/// gps_unpack(line, data) for one complete line from gpsd (NUL-terminated, no newline), as
/// gps_read does once it has a line: the report's values go into `data`. 0 when the line was
/// read, -1 when libgps could not read it.
static inline int cgps_unpack(void *data, char *line) {
    struct gps_data_t *d = (struct gps_data_t *)data;
    d->set &= ~PACKET_SET;
    int status = gps_unpack(line, d);
    d->set |= PACKET_SET;
    return status;
}

/// gps_close(data).
static inline int cgps_close(void *data) { return gps_close((struct gps_data_t *)data); }

/// gps_errstr(error).
static inline const char *cgps_errstr(int error) { return gps_errstr(error); }

/// Copies the last report's fix and the last SKY's satellites and DOPs into `out`.
static inline void cgps_get_report(const void *opaque, cgps_report *out) {
    const struct gps_data_t *d = (const struct gps_data_t *)opaque;
    out->mode = d->fix.mode;
    out->status = d->fix.status;
    out->has_time = (d->set & TIME_SET) != 0 && d->fix.time.tv_sec > 0;
    out->time_sec = (long long)d->fix.time.tv_sec;
    out->time_nsec = d->fix.time.tv_nsec;
    out->latitude = d->fix.latitude;
    out->longitude = d->fix.longitude;
    out->alt_hae = d->fix.altHAE;
    out->alt_msl = d->fix.altMSL;
    out->eph = d->fix.eph;
    out->epx = d->fix.epx;
    out->epy = d->fix.epy;
    out->epv = d->fix.epv;
    out->speed = d->fix.speed;
    out->eps = d->fix.eps;
    out->track = d->fix.track;
    out->epd = d->fix.epd;
    out->climb = d->fix.climb;
    out->geoid_sep = d->fix.geoid_sep;
    out->satellites_used = (d->set & SATELLITE_SET) != 0 || d->satellites_used > 0 ? d->satellites_used : -1;
    out->hdop = d->dop.hdop;
    out->vdop = d->dop.vdop;
    out->pdop = d->dop.pdop;
    strncpy(out->device, d->dev.path, sizeof out->device - 1);
    out->device[sizeof out->device - 1] = '\0';
}

#endif
