/** The overview's throughput chart: jobs per minute over this many minutes (asked for by the page and its server render alike). */
export const THROUGHPUT_MINUTES = 60;
