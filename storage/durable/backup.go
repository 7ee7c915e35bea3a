package durable

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble"

	"github.com/kapi-dev/kapi/storage"
)

// Backup writes a consistent copy of the store, state and history, to w
// while the store goes on serving (as `etcdctl snapshot save`): a pebble
// checkpoint of the database, its files in a tar stream ending with an
// end entry (backupEnd), so that a backup cut short is told from a whole
// one. It returns the bytes written.
func (s *Store) Backup(ctx context.Context, w io.Writer) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n, err := s.disk.backup(w)
	if err != nil {
		return n, &storage.Error{Err: storage.ErrUnavailable, Msg: "durable: backup: " + err.Error()}
	}
	return n, nil
}

// backupEnd is a backup's last entry.
const backupEnd = "kapi-durable-backup-end"

// backup checkpoints the database (its tables hard-linked, its log
// copied; commits wait meanwhile) and writes the checkpoint to w.
func (d *disk) backup(w io.Writer) (int64, error) {
	tmp, err := os.MkdirTemp(d.dir, ".backup-*")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	cp := filepath.Join(tmp, DirName)
	d.mu.Lock()
	err = d.ready()
	if err == nil {
		err = d.db.Checkpoint(cp, pebble.WithFlushedWAL())
	}
	d.mu.Unlock()
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir(cp)
	if err != nil {
		return 0, err
	}
	cw := &countWriter{w: w}
	tw := tar.NewWriter(cw)
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := addFile(tw, filepath.Join(cp, e.Name())); err != nil {
			return cw.n, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: backupEnd, Mode: 0o600, Typeflag: tar.TypeReg}); err != nil {
		return cw.n, err
	}
	err = tw.Close()
	return cw.n, err
}

func addFile(tw *tar.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: fi.Name(), Mode: 0o600, Size: fi.Size(), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// BackupFile writes a backup to path atomically: a file beside it,
// synced, then renamed. An existing file at path is replaced.
func (s *Store) BackupFile(ctx context.Context, path string) error {
	return writeFileAtomic(path, func(f *os.File) error {
		_, err := s.Backup(ctx, f)
		return err
	})
}

// ErrDataExists: Restore was given a data directory that holds a store,
// or Adopt one whose marker is in place.
var ErrDataExists = errors.New("durable: the data directory already holds a store")

// Restore makes dir (which must not hold a store) a store holding the
// backup at path, checked first (*OpenError with ErrCorrupt when it is
// not a whole kapi backup): unpacked beside its place, read, then
// renamed into place with the marker at its revision. Open(dir) then
// serves it at the revision of the backup, with the history the backup
// held.
func Restore(backup, dir string) error {
	f, err := os.Open(backup)
	if err != nil {
		return &OpenError{Path: backup, Err: ErrCorrupt, Cause: err}
	}
	defer f.Close()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return &OpenError{Path: dir, Err: ErrNotWritable, Cause: err}
	}
	for _, name := range []string{DirName, MarkerName, legacyName} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return &OpenError{Path: filepath.Join(dir, name), Err: ErrDataExists, Cause: errors.New("remove it, or restore into another directory")}
		}
	}
	tmp := filepath.Join(dir, DirName+".restore")
	os.RemoveAll(tmp)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return &OpenError{Path: dir, Err: ErrNotWritable, Cause: err}
	}
	if err := unpack(f, tmp); err != nil {
		os.RemoveAll(tmp)
		return &OpenError{Path: backup, Err: ErrCorrupt, Cause: err}
	}
	_, rev, _, _, err := loadDB(tmp, 0)
	if err != nil {
		os.RemoveAll(tmp)
		if oe, ok := err.(*OpenError); ok {
			oe.Path = backup
		}
		return err
	}
	if err := syncDir(tmp); err != nil {
		return &OpenError{Path: dir, Err: ErrNotWritable, Cause: err}
	}
	if err := os.Rename(tmp, filepath.Join(dir, DirName)); err != nil {
		return &OpenError{Path: dir, Err: ErrNotWritable, Cause: err}
	}
	if err := syncDir(dir); err != nil {
		return &OpenError{Path: dir, Err: ErrNotWritable, Cause: err}
	}
	return writeMarker(dir, rev)
}

// Adopt takes the database in dir, whose marker is missing, as it is:
// it checks that the database reads whole, opens it for writing once
// (pebble then syncs what its log held into its tables) and writes the
// marker at its revision, so that Open serves it. What the lost marker
// would have told, that no write after that revision was acknowledged,
// cannot be checked: Adopt is for a database known whole (the directory
// of a store closed cleanly, copied without its marker). A directory
// that has its marker is refused (ErrDataExists: Open it); one made by
// Restore has its marker.
func Adopt(dir string) error {
	lock, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	path := filepath.Join(dir, DirName)
	if _, err := readMarker(dir); err != errNoMarker {
		if err == nil {
			err = &OpenError{Path: filepath.Join(dir, MarkerName), Err: ErrDataExists, Cause: errors.New("the marker is in place: Open the directory")}
		}
		return err
	}
	if _, _, _, _, err := loadDB(path, 0); err != nil {
		return err
	}
	db, err := pebble.Open(path, engineOptions(false))
	if err != nil {
		return openErr(path, err)
	}
	_, rev, err := revisions(db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = writeMarker(dir, rev)
	}
	if err != nil {
		return &OpenError{Path: dir, Err: ErrNotWritable, Cause: err}
	}
	return nil
}

// unpack writes the files of the tar stream r into dir, synced, and
// checks that the stream ends with the end entry.
func unpack(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return errors.New("the backup is cut short: no end entry")
		}
		if err != nil {
			return err
		}
		if h.Name == backupEnd {
			return nil
		}
		if h.Typeflag != tar.TypeReg || h.Name != filepath.Base(h.Name) || h.Name == "." || h.Name == ".." {
			return fmt.Errorf("unexpected entry %q", h.Name)
		}
		if err := writeFile(filepath.Join(dir, h.Name), tr); err != nil {
			return err
		}
	}
}

// writeFile copies r to a new file path, synced.
func writeFile(path string, r io.Reader) error {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
