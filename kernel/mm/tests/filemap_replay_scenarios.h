/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Access patterns the mm_filemap_replay suites replay through the real mmap
 * fault path: the initialisers of the scenario table in
 * mm/tests/filemap_replay_kunit.h, one per scenario. A field left out is 0.
 *
 * .scale           RP_SMALL: the mm_filemap_replay suite, seconds;
 *                  RP_SEED: mm_filemap_replay_seed, minutes: 20 GiB
 *                  and 4 GiB files in an 8 GiB guest (below)
 * .desc            the scenario, as the test log and the CSV name it
 * .file_pages      size of the mapped file, in pages
 * .cache_pages     page-cache capacity: beyond it the replay reclaims the
 *                  least recently used pages (memory pressure);
 *                  >= file_pages means the file fits in the cache
 * .ra_pages        the file's read-around window (file->f_ra.ra_pages)
 * .order           RP_RANDOM: distinct pages in an order drawn from seed;
 *                  RP_STRIDE: pages 0, stride, 2 * stride, ... modulo
 *                  file_pages (a stride coprime with file_pages never
 *                  repeats a page); RP_SEQUENTIAL: pages 0, 1, 2, ...
 * .stride          the step of RP_STRIDE
 * .seed            the seed of RP_RANDOM
 * .touch_permille  how many pages are touched, per mille of file_pages
 * .saves, .same_pct
 *                  what the mmap_miss change (fault-around credits only
 *                  the faulting address, and nothing on a FAULT_FLAG_TRIED
 *                  retry) must do to the pages read, against a build
 *                  without it, checked by comparing the two builds'
 *                  reports (the kernel does not check it): .saves = n,
 *                  the build without it reads at least n times as many
 *                  pages; .same_pct = p, within p per cent of it;
 *                  neither, no bound
 *
 * The bounds follow from the rules of mmap_miss. With
 * the change a miss is never cancelled, so after MMAP_LOTSAMISS (100)
 * misses read-around stops and a touch reads about one page: about
 * 100 * ra_pages + touches pages in all (a little more where a hit on a
 * PG_readahead page starts async readahead). Without it, the retry of
 * each miss and the fault-around that maps the neighbours it read cancel
 * the miss: mmap_miss stays near 0 and each miss reads ra_pages. With only
 * one half of the change, the other half still cancels the misses: a
 * build with either half alone must fail every .saves bound.
 *
 * - Under pressure, random and strides longer than ra_pages / 2 miss on
 *   most touches, so without the change about touches * ra_pages pages
 *   are read: at seed scale 52428 touches, 1.1 * 10^8 pages against about
 *   2.6 * 10^5, more than 400 times fewer; the bound is two orders of
 *   magnitude (.saves = 100). At small scale, 655 touches: about
 *   1.3 * 10^6 pages against about 2.1 * 10^5, six times fewer
 *   (.saves = 2, a floor: the first 100 read-arounds are most of it).
 * - A fitting file at seed scale: without the change read-around goes on
 *   until it has read the whole file (1048576 pages); with it, read-around
 *   stops after about 2.1 * 10^5: several times less (.saves = 3). At
 *   small scale the whole file is 8 read-around windows, read long before
 *   100 misses: the same in every build (.same_pct = 10).
 * - A stride shorter than ra_pages / 2 lands in the window the last miss
 *   read: a real hit about every other touch keeps mmap_miss near 0 in
 *   every build. Sequential access hits nearly always. Both .same_pct = 10.
 *
 * Small scale: a 256 MiB file under a 32 MiB cache; a 64 MiB file that fits.
 *
 * Seed scale, a benchmark's setup: an 8 GiB guest, a 20 GiB file
 * under pressure and a 4 GiB file that fits, read_ahead_kb 8192, 1% of the
 * pages touched (52428 touches of 20 GiB, sequential: the first 1%). The
 * guest's page cache can hold 7.5 GiB (1966080 pages): the other 512 MiB is
 * what an 8 GiB guest keeps for itself (its memmap alone is 128 MiB, then
 * the kernel, slab, page tables and the benchmark process).
 */
{
	.scale = RP_SMALL,
	.desc = "random 1% under pressure",
	.file_pages = 65536,
	.cache_pages = 8192,
	.ra_pages = 2048,
	.order = RP_RANDOM,
	.seed = 1,
	.touch_permille = 10,
	.saves = 2,
},
{
	.scale = RP_SMALL,
	.desc = "stride 1021 under pressure",
	.file_pages = 65536,
	.cache_pages = 8192,
	.ra_pages = 2048,
	.order = RP_STRIDE,
	.stride = 1021,
	.touch_permille = 10,
	.same_pct = 10,
},
{
	.scale = RP_SMALL,
	.desc = "stride 2053 under pressure",
	.file_pages = 65536,
	.cache_pages = 8192,
	.ra_pages = 2048,
	.order = RP_STRIDE,
	.stride = 2053,
	.touch_permille = 10,
	.saves = 2,
},
{
	.scale = RP_SMALL,
	.desc = "stride 4099 under pressure",
	.file_pages = 65536,
	.cache_pages = 8192,
	.ra_pages = 2048,
	.order = RP_STRIDE,
	.stride = 4099,
	.touch_permille = 10,
	.saves = 2,
},
{
	.scale = RP_SMALL,
	.desc = "sequential under pressure",
	.file_pages = 65536,
	.cache_pages = 8192,
	.ra_pages = 2048,
	.order = RP_SEQUENTIAL,
	.touch_permille = 100,
	.same_pct = 10,
},
{
	.scale = RP_SMALL,
	.desc = "random 1% fitting",
	.file_pages = 16384,
	.cache_pages = 16384,
	.ra_pages = 2048,
	.order = RP_RANDOM,
	.seed = 1,
	.touch_permille = 10,
	.same_pct = 10,
},
{
	.scale = RP_SMALL,
	.desc = "stride 1021 fitting",
	.file_pages = 16384,
	.cache_pages = 16384,
	.ra_pages = 2048,
	.order = RP_STRIDE,
	.stride = 1021,
	.touch_permille = 10,
	.same_pct = 10,
},
{
	.scale = RP_SMALL,
	.desc = "stride 2053 fitting",
	.file_pages = 16384,
	.cache_pages = 16384,
	.ra_pages = 2048,
	.order = RP_STRIDE,
	.stride = 2053,
	.touch_permille = 10,
	.same_pct = 10,
},
{
	.scale = RP_SMALL,
	.desc = "stride 4099 fitting",
	.file_pages = 16384,
	.cache_pages = 16384,
	.ra_pages = 2048,
	.order = RP_STRIDE,
	.stride = 4099,
	.touch_permille = 10,
	.same_pct = 10,
},
{
	.scale = RP_SMALL,
	.desc = "sequential fitting",
	.file_pages = 16384,
	.cache_pages = 16384,
	.ra_pages = 2048,
	.order = RP_SEQUENTIAL,
	.touch_permille = 100,
	.same_pct = 10,
},
{
	.scale = RP_SEED,
	.desc = "random 1% of 20 GiB",
	.file_pages = 5242880,
	.cache_pages = 1966080,
	.ra_pages = 2048,
	.order = RP_RANDOM,
	.seed = 1,
	.touch_permille = 10,
	.saves = 100,
},
{
	.scale = RP_SEED,
	.desc = "stride 1021 of 20 GiB",
	.file_pages = 5242880,
	.cache_pages = 1966080,
	.ra_pages = 2048,
	.order = RP_STRIDE,
	.stride = 1021,
	.touch_permille = 10,
	.same_pct = 10,
},
{
	.scale = RP_SEED,
	.desc = "stride 2053 of 20 GiB",
	.file_pages = 5242880,
	.cache_pages = 1966080,
	.ra_pages = 2048,
	.order = RP_STRIDE,
	.stride = 2053,
	.touch_permille = 10,
	.saves = 100,
},
{
	.scale = RP_SEED,
	.desc = "stride 4099 of 20 GiB",
	.file_pages = 5242880,
	.cache_pages = 1966080,
	.ra_pages = 2048,
	.order = RP_STRIDE,
	.stride = 4099,
	.touch_permille = 10,
	.saves = 100,
},
{
	.scale = RP_SEED,
	.desc = "sequential 1% of 20 GiB",
	.file_pages = 5242880,
	.cache_pages = 1966080,
	.ra_pages = 2048,
	.order = RP_SEQUENTIAL,
	.touch_permille = 10,
	.same_pct = 10,
},
{
	.scale = RP_SEED,
	.desc = "random 1% of 4 GiB",
	.file_pages = 1048576,
	.cache_pages = 1966080,
	.ra_pages = 2048,
	.order = RP_RANDOM,
	.seed = 1,
	.touch_permille = 10,
	.saves = 3,
},
{
	.scale = RP_SEED,
	.desc = "stride 1021 of 4 GiB",
	.file_pages = 1048576,
	.cache_pages = 1966080,
	.ra_pages = 2048,
	.order = RP_STRIDE,
	.stride = 1021,
	.touch_permille = 10,
	.same_pct = 10,
},
{
	.scale = RP_SEED,
	.desc = "stride 2053 of 4 GiB",
	.file_pages = 1048576,
	.cache_pages = 1966080,
	.ra_pages = 2048,
	.order = RP_STRIDE,
	.stride = 2053,
	.touch_permille = 10,
	.saves = 3,
},
{
	.scale = RP_SEED,
	.desc = "stride 4099 of 4 GiB",
	.file_pages = 1048576,
	.cache_pages = 1966080,
	.ra_pages = 2048,
	.order = RP_STRIDE,
	.stride = 4099,
	.touch_permille = 10,
	.saves = 3,
},
{
	.scale = RP_SEED,
	.desc = "sequential 1% of 4 GiB",
	.file_pages = 1048576,
	.cache_pages = 1966080,
	.ra_pages = 2048,
	.order = RP_SEQUENTIAL,
	.touch_permille = 10,
	.same_pct = 10,
},
