package virt

import (
	"encoding/xml"
	"fmt"
	"sort"
)

// capabilities is the part of libvirt's capabilities XML (virConnectGetCapabilities)
// the agents read.
type capabilities struct {
	Host struct {
		CPU struct {
			Arch     string `xml:"arch"`
			Model    string `xml:"model"`
			Topology struct {
				Sockets int `xml:"sockets,attr"`
				Cores   int `xml:"cores,attr"`
				Threads int `xml:"threads,attr"`
			} `xml:"topology"`
		} `xml:"cpu"`
		Cells []struct {
			ID     uint64 `xml:"id,attr"`
			Memory struct {
				Unit  string `xml:"unit,attr"`
				Value int64  `xml:",chardata"`
			} `xml:"memory"`
			CPUs struct {
				Num int64 `xml:"num,attr"`
			} `xml:"cpus"`
		} `xml:"topology>cells>cell"`
	} `xml:"host"`
}

// parseCapabilities fills the CPU and NUMA parts of h from libvirt's capabilities XML.
func parseCapabilities(doc string, h *Host) error {
	var c capabilities
	if err := xml.Unmarshal([]byte(doc), &c); err != nil {
		return fmt.Errorf("cannot parse libvirt capabilities: %w", err)
	}
	h.Arch = c.Host.CPU.Arch
	h.CPUModel = c.Host.CPU.Model
	h.Sockets, h.Cores, h.Threads = c.Host.CPU.Topology.Sockets, c.Host.CPU.Topology.Cores, c.Host.CPU.Topology.Threads
	h.Cells = h.Cells[:0]
	for _, cell := range c.Host.Cells {
		mem, err := bytesOf(cell.Memory.Value, cell.Memory.Unit)
		if err != nil {
			return fmt.Errorf("NUMA cell %d: %w", cell.ID, err)
		}
		h.Cells = append(h.Cells, Cell{ID: cell.ID, CPUs: cell.CPUs.Num, MemoryBytes: mem})
	}
	return nil
}

// domainCapabilities is the part of virConnectGetDomainCapabilities' XML the agents read.
type domainCapabilities struct {
	Arch   string `xml:"arch"`
	Domain string `xml:"domain"`
	CPU    struct {
		Modes []struct {
			Name      string `xml:"name,attr"`
			Supported string `xml:"supported,attr"`
			Models    []struct {
				Name string `xml:",chardata"`
			} `xml:"model"`
		} `xml:"mode"`
	} `xml:"cpu"`
	Devices struct {
		Any []struct {
			XMLName   xml.Name
			Supported string `xml:"supported,attr"`
		} `xml:",any"`
	} `xml:"devices"`
	Features struct {
		Any []struct {
			XMLName   xml.Name
			Supported string `xml:"supported,attr"`
		} `xml:",any"`
	} `xml:"features"`
}

// parseDomainCapabilities fills the domain-capability parts of h.
func parseDomainCapabilities(doc string, h *Host) error {
	var c domainCapabilities
	if err := xml.Unmarshal([]byte(doc), &c); err != nil {
		return fmt.Errorf("cannot parse libvirt domain capabilities: %w", err)
	}
	h.DomainArch, h.DomainVirtType = c.Arch, c.Domain
	h.CPUModes, h.Devices, h.Features = nil, nil, nil
	for _, m := range c.CPU.Modes {
		if m.Supported == "yes" {
			h.CPUModes = append(h.CPUModes, m.Name)
		}
	}
	for _, d := range c.Devices.Any {
		if d.Supported == "yes" {
			h.Devices = append(h.Devices, d.XMLName.Local)
		}
	}
	for _, f := range c.Features.Any {
		if f.Supported == "yes" {
			h.Features = append(h.Features, f.XMLName.Local)
		}
	}
	sort.Strings(h.CPUModes)
	sort.Strings(h.Devices)
	sort.Strings(h.Features)
	return nil
}

// bytesOf converts a libvirt scaled integer to bytes (libvirt's default unit is KiB).
func bytesOf(v int64, unit string) (int64, error) {
	switch unit {
	case "b", "bytes":
		return v, nil
	case "", "KiB", "k", "K":
		return v << 10, nil
	case "MiB", "M":
		return v << 20, nil
	case "GiB", "G":
		return v << 30, nil
	case "TiB", "T":
		return v << 40, nil
	}
	return 0, fmt.Errorf("unknown memory unit %q", unit)
}
