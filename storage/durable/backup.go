package durable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kapi-dev/kapi/storage"
)

// Backup writes a consistent copy of the store, state and history, to w
// while the store goes on serving (one bbolt read transaction, as
// `etcdctl snapshot save`). It returns the bytes written.
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

// BackupFile writes a backup to path atomically: a file beside it,
// synced, then renamed. An existing file at path is replaced.
func (s *Store) BackupFile(ctx context.Context, path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := s.Backup(ctx, f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// ErrDataExists: Restore was given a data directory that holds a store.
var ErrDataExists = errors.New("durable: the data directory already holds a store")

// Restore makes dir (which must not hold a store) a store holding the
// backup at path, checked first (*OpenError with ErrCorrupt when it is not
// a whole kapi database). Open(dir) then serves it at the revision of the
// backup, with the history the backup held.
func Restore(backup, dir string) error {
	db, err := openBolt(backup, true)
	if err != nil {
		return err
	}
	d := &disk{db: db, path: backup}
	_, _, _, _, lerr := d.load()
	db.Close()
	if lerr != nil {
		return lerr
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return &OpenError{Path: dir, Err: ErrNotWritable, Cause: err}
	}
	path := filepath.Join(dir, FileName)
	if _, err := os.Stat(path); err == nil {
		return &OpenError{Path: path, Err: ErrDataExists, Cause: errors.New("remove it, or restore into another directory")}
	}
	if err := copyFile(backup, path+".restore"); err != nil {
		os.Remove(path + ".restore")
		return &OpenError{Path: dir, Err: ErrNotWritable, Cause: err}
	}
	if err := os.Rename(path+".restore", path); err != nil {
		return &OpenError{Path: dir, Err: ErrNotWritable, Cause: err}
	}
	return syncDir(dir)
}

// copyFile copies src to a new file dst, synced.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s: %w", src, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
